%% @doc Options → the client's configuration. In a pod everything comes from the service
%% account mount and KUBERNETES_SERVICE_HOST/PORT; out of a pod the API URL, the credentials
%% (a token file, or a client certificate and key) and the CA file are options. Unknown options
%% and unusable values are refused with a message that names them.
%%
%% `enabled' decides what happens where the client cannot run: `auto' (the default) ignores the
%% start out of a pod, that is with no service account mount, no `api_url' and no
%% KUBERNETES_SERVICE_HOST (a laptop, `mix test', CI); `true' makes every missing setting an
%% error; `false' always ignores the start.
-module(cluster_topology_config).

-export([parse/1, parse/2, defaults/0]).
-export_type([options/0, config/0, hook/0, api/0]).

-define(SA_DIR, <<"/var/run/secrets/kubernetes.io/serviceaccount">>).

-type text() :: binary() | string().
-type hook() :: fun((map()) -> term()) | {module(), atom()} | pid() | atom().

%% The options as a user gives them: a map, or a list of {Key, Value} (Elixir's keyword list).
-type options() :: #{
    name => text(),
    namespace => text(),
    enabled => boolean() | auto,
    api_url => text(),
    token_file => text(),
    cert_file => text(),
    key_file => text(),
    ca_file => text(),
    pod_name => text(),
    service_account_dir => text(),
    lease => boolean(),
    report => boolean(),
    hook => hook() | undefined,
    register => atom() | false,
    connect_concurrency => pos_integer(),
    max_peers => pos_integer(),
    max_body_bytes => pos_integer(),
    backoff_min_ms => pos_integer(),
    backoff_max_ms => pos_integer(),
    retry_ms => pos_integer(),
    reconnect_delay_ms => pos_integer(),
    connect_timeout_ms => pos_integer(),
    request_timeout_ms => pos_integer(),
    watch_timeout_s => pos_integer(),
    idle_timeout_ms => pos_integer()
} | [{atom(), term()}].

%% Where the API server is: `prefix' is the URL's path (a proxy may serve the API below one).
-type api() :: #{tls := boolean(), host := string(), port := inet:port_number(), prefix := binary()}.

%% The parsed configuration: every option with its value or default, strings as binaries, and
%% the API server's address.
-type config() :: #{
    name := binary(),
    namespace := binary(),
    enabled := boolean() | auto,
    api_url := binary(),
    api := api(),
    token_file := binary() | undefined,
    cert_file := binary() | undefined,
    key_file := binary() | undefined,
    ca_file := binary() | undefined,
    pod_name := binary() | undefined,
    service_account_dir := binary(),
    lease := boolean(),
    report := boolean(),
    hook := hook() | undefined,
    register := atom() | false,
    connect_concurrency := pos_integer(),
    max_peers := pos_integer(),
    max_body_bytes := pos_integer(),
    backoff_min_ms := pos_integer(),
    backoff_max_ms := pos_integer(),
    retry_ms := pos_integer(),
    reconnect_delay_ms := pos_integer(),
    connect_timeout_ms := pos_integer(),
    request_timeout_ms := pos_integer(),
    watch_timeout_s := pos_integer(),
    idle_timeout_ms := pos_integer()
}.

%% @doc Every option's default (`undefined': none, or found in the pod).
-spec defaults() -> #{atom() => term()}.
defaults() ->
    #{
        namespace => undefined,
        name => undefined,
        enabled => auto,
        api_url => undefined,
        token_file => undefined,
        cert_file => undefined,
        key_file => undefined,
        ca_file => undefined,
        pod_name => undefined,
        service_account_dir => ?SA_DIR,
        lease => true,
        report => true,
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

%% @doc Parses options (a map or a proplist, as Erlang or Elixir gives them): the configuration,
%% `{ignore, Why}' when the client is not to run here (see `enabled'), or `{error, Why}'.
-spec parse(options()) -> {ok, config()} | {ignore, binary()} | {error, binary()}.
parse(Opts) -> parse(Opts, fun os:getenv/1).

%% @doc As `parse/1', with the environment read through `GetEnv' (tests give their own).
-spec parse(options(), fun((string()) -> string() | false)) ->
    {ok, config()} | {ignore, binary()} | {error, binary()}.
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
                decide(maps:merge(D, maps:map(fun normalize/2, Opts)), GetEnv)
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
other(report, V) when is_boolean(V) -> V;
other(enabled, V) when is_boolean(V); V =:= auto -> V;
other(hook, F) when is_function(F, 1) -> F;
other(hook, {M, F}) when is_atom(M), is_atom(F) -> {M, F};
other(hook, P) when is_pid(P); is_atom(P) -> P;
other(register, false) -> false;
other(register, A) when is_atom(A) -> A;
other(K, V) -> bad("~p has an unusable value: ~p", [K, V]).

%% Whether the client runs here; if it does, its configuration.
decide(#{name := undefined}, _) ->
    bad("name (the ClusterTopology's name) is not set", []);
decide(#{enabled := false}, _) ->
    {ignore, <<"enabled is false">>};
decide(#{enabled := auto, api_url := undefined, service_account_dir := SA} = C, GetEnv) ->
    case filelib:is_dir(SA) orelse is_list(GetEnv("KUBERNETES_SERVICE_HOST")) of
        true ->
            {ok, resolve(C, GetEnv)};
        false ->
            {ignore, iolist_to_binary([<<"not in a Kubernetes pod (no service account mount in ">>, SA,
                <<", no api_url, no KUBERNETES_SERVICE_HOST); set api_url and credentials to use it here, "
                  "or enabled => true to make this an error">>])}
    end;
decide(C, GetEnv) ->
    {ok, resolve(C, GetEnv)}.

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
