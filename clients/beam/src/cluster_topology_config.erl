%% @doc Options → the client's configuration. In a pod everything comes from the service
%% account mount and KUBERNETES_SERVICE_HOST/PORT; out of a pod the API URL, the credentials
%% (a token file, or a client certificate and key) and the CA file are options. Unknown options
%% and unusable values are refused with a message that names them.
-module(cluster_topology_config).

-export([parse/1, parse/2, defaults/0, backoff/4]).

-define(SA_DIR, <<"/var/run/secrets/kubernetes.io/serviceaccount">>).

defaults() ->
    #{
        namespace => undefined,
        name => undefined,
        api_url => undefined,
        token_file => undefined,
        cert_file => undefined,
        key_file => undefined,
        ca_file => undefined,
        pod_name => undefined,
        service_account_dir => ?SA_DIR,
        lease => true,
        hook => undefined,
        register => cluster_topology,
        connect_concurrency => 8,
        max_peers => 5000,
        max_body_bytes => 16 * 1024 * 1024,
        backoff_min_ms => 500,
        backoff_max_ms => 30000,
        retry_ms => 5000,
        reconnect_delay_ms => 500,
        connect_timeout_ms => 10000,
        request_timeout_ms => 30000,
        watch_timeout_s => 290,
        idle_timeout_ms => 150000
    }.

%% @doc Parses options (a map or a proplist, as Erlang or Elixir gives them).
-spec parse(map() | list()) -> {ok, map()} | {error, binary()}.
parse(Opts) -> parse(Opts, fun os:getenv/1).

parse(Opts, GetEnv) when is_list(Opts) ->
    case lists:all(fun(X) -> is_tuple(X) andalso tuple_size(X) =:= 2 andalso is_atom(element(1, X)) end, Opts) of
        true -> parse(maps:from_list(Opts), GetEnv);
        false -> {error, <<"options must be a map or a list of {Key, Value}">>}
    end;
parse(Opts, GetEnv) when is_map(Opts) ->
    D = defaults(),
    case [K || K <- maps:keys(Opts), not maps:is_key(K, D)] of
        [] ->
            try
                {ok, resolve(maps:merge(D, maps:map(fun normalize/2, Opts)), GetEnv)}
            catch
                throw:{config, Msg} -> {error, iolist_to_binary(Msg)}
            end;
        Unknown ->
            {error, iolist_to_binary(io_lib:format("unknown options: ~p (known: ~p)", [Unknown, lists:sort(maps:keys(D))]))}
    end;
parse(_, _) ->
    {error, <<"options must be a map or a list of {Key, Value}">>}.

bad(Fmt, Args) -> throw({config, io_lib:format(Fmt, Args)}).

-define(STRINGS, [namespace, name, api_url, token_file, cert_file, key_file, ca_file, pod_name, service_account_dir]).
-define(POS_INTS, [connect_concurrency, max_peers, max_body_bytes, backoff_min_ms, backoff_max_ms, retry_ms,
    reconnect_delay_ms, connect_timeout_ms, request_timeout_ms, watch_timeout_s, idle_timeout_ms]).

normalize(K, undefined) -> (maps:get(K, defaults()) =:= undefined orelse K =:= hook) orelse bad("~p may not be undefined", [K]), undefined;
normalize(K, V) ->
    case lists:member(K, ?STRINGS) of
        true -> string(K, V);
        false ->
            case lists:member(K, ?POS_INTS) of
                true when is_integer(V), V > 0 -> V;
                true -> bad("~p must be a positive integer, not ~p", [K, V]);
                false -> other(K, V)
            end
    end.

string(_K, V) when is_binary(V), V =/= <<>> -> V;
string(K, V) when is_list(V), V =/= [] ->
    try unicode:characters_to_binary(V) of
        B when is_binary(B) -> B;
        _ -> bad("~p must be a string", [K])
    catch _:_ -> bad("~p must be a string", [K])
    end;
string(K, V) -> bad("~p must be a non-empty string, not ~p", [K, V]).

other(lease, V) when is_boolean(V) -> V;
other(hook, F) when is_function(F, 1) -> F;
other(hook, {M, F}) when is_atom(M), is_atom(F) -> {M, F};
other(hook, P) when is_pid(P); is_atom(P) -> P;
other(register, false) -> false;
other(register, A) when is_atom(A) -> A;
other(K, V) -> bad("~p has an unusable value: ~p", [K, V]).

resolve(C0, GetEnv) ->
    SA = binary_to_list(maps:get(service_account_dir, C0)),
    InPod = fun(F) ->
        P = filename:join(SA, F),
        case filelib:is_regular(P) of true -> list_to_binary(P); false -> undefined end
    end,
    C1 = default(namespace, C0, fun() ->
        case InPod("namespace") of
            undefined -> bad("namespace is not set (and no service account namespace file in ~s)", [SA]);
            F ->
                {ok, NS} = file:read_file(F),
                string:trim(NS)
        end
    end),
    maps:get(name, C1) =:= undefined andalso bad("name (the ClusterTopology's name) is not set", []),
    C2 = default(api_url, C1, fun() ->
        case {GetEnv("KUBERNETES_SERVICE_HOST"), GetEnv("KUBERNETES_SERVICE_PORT")} of
            {H, P} when is_list(H), H =/= "", is_list(P), P =/= "" ->
                Host = case lists:member($:, H) of true -> "[" ++ H ++ "]"; false -> H end,
                list_to_binary("https://" ++ Host ++ ":" ++ P);
            _ ->
                bad("api_url is not set and KUBERNETES_SERVICE_HOST/PORT are not in the environment", [])
        end
    end),
    Client = maps:get(cert_file, C2) =/= undefined orelse maps:get(key_file, C2) =/= undefined,
    Client andalso (maps:get(cert_file, C2) =:= undefined orelse maps:get(key_file, C2) =:= undefined) andalso
        bad("cert_file and key_file go together", []),
    C3 = case Client of
        true -> C2;
        false -> default(token_file, C2, fun() ->
            case InPod("token") of
                undefined -> bad("no credentials: set token_file, or cert_file and key_file (no service account token in ~s)", [SA]);
                F -> F
            end
        end)
    end,
    C4 = default(pod_name, C3, fun() ->
        case GetEnv("HOSTNAME") of
            H when is_list(H), H =/= "" -> list_to_binary(H);
            _ -> undefined
        end
    end),
    Api = parse_url(maps:get(api_url, C4)),
    C5 = case Api of
        #{tls := true} -> default(ca_file, C4, fun() ->
            case InPod("ca.crt") of
                undefined -> bad("ca_file is not set (and no service account ca.crt in ~s)", [SA]);
                F -> F
            end
        end);
        _ -> C4
    end,
    maps:get(backoff_min_ms, C5) =< maps:get(backoff_max_ms, C5) orelse bad("backoff_min_ms exceeds backoff_max_ms", []),
    C5#{api => Api}.

default(K, C, F) ->
    case maps:get(K, C) of
        undefined -> C#{K => F()};
        _ -> C
    end.

parse_url(Url) ->
    case uri_string:parse(Url) of
        #{scheme := S, host := H} = U when S =:= <<"https">>; S =:= <<"http">> ->
            TLS = S =:= <<"https">>,
            Port = maps:get(port, U, case TLS of true -> 443; false -> 80 end),
            Prefix = string:trim(maps:get(path, U, <<>>), trailing, "/"),
            #{tls => TLS, host => binary_to_list(H), port => Port, prefix => Prefix};
        _ ->
            bad("api_url ~s is not an http(s) URL", [Url])
    end.

%% @doc Capped exponential backoff with jitter: a delay in [D/2, D], D = min(Max, Min * 2^Attempt).
-spec backoff(non_neg_integer(), pos_integer(), pos_integer(), fun((pos_integer()) -> pos_integer())) -> pos_integer().
backoff(Attempt, Min, Max, Uniform) ->
    D = min(Max, Min bsl min(Attempt, 30)),
    Half = max(1, D div 2),
    D - Half + Uniform(Half + 1) - 1.
