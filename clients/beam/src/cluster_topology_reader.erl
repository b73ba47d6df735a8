%% @doc Reads one Kubernetes object and follows it: GET, then WATCH from the GET's
%% resourceVersion (narrowed to the object with a fieldSelector, bookmarks on), resuming from the
%% last resourceVersion seen, re-GET on 410 Gone, reconnecting with capped, jittered backoff.
%% What it learns goes to its parent as `{cluster_topology_read, Kind, Event}':
%%
%%   {object, Term, ReceivedAtMs}  the object as it is now, as `Reduce(Object)' made it
%%   gone                          it does not exist (404, or a DELETED event)
%%   reachable                     the API answered (a GET or a watch was accepted)
%%   {trouble, Cause, Detail}      Cause: api_unreachable | unauthorized | forbidden |
%%                                 api_error | malformed
%%
%% The bearer token is read from its file before a request whenever the file changed
%% (projected service account tokens rotate), and after a 401.
-module(cluster_topology_reader).

-export([start_link/4, init/4]).

-record(r, {
    parent :: pid(),
    kind :: atom(),
    conf :: map(),
    http :: map(),
    obj_path :: binary(),
    watch_path :: binary(),
    rv :: binary() | undefined,
    attempt = 0 :: non_neg_integer(),
    token = undefined :: undefined | {term(), binary()},
    reduce :: fun((map()) -> term())
}).

%% Kind: topology | lease. Conf: the parsed client configuration. Reduce: what of a decoded
%% object the parent gets (its meaning, not the whole object: the parent keeps it for long, and
%% a large decoded object is garbage here as soon as it is reduced).
start_link(Parent, Kind, Conf, Reduce) ->
    proc_lib:spawn_link(?MODULE, init, [Parent, Kind, Conf, Reduce]).

init(Parent, Kind, #{api := Api, namespace := NS, name := Name} = Conf, Reduce) ->
    logger:set_process_metadata(#{topology => <<NS/binary, "/", Name/binary>>, reader => Kind}),
    {Coll, ObjName} =
        case Kind of
            topology ->
                {[<<"/apis/cluster.netzlive.io/v1alpha1/namespaces/">>, q(NS), <<"/clustertopologies">>], Name};
            lease ->
                {[<<"/apis/coordination.k8s.io/v1/namespaces/">>, q(NS), <<"/leases">>], <<"clustertopology.", Name/binary>>}
        end,
    Prefix = maps:get(prefix, Api),
    Http0 = #{
        host => maps:get(host, Api),
        port => maps:get(port, Api),
        tls => maps:get(tls, Api),
        connect_timeout => maps:get(connect_timeout_ms, Conf),
        recv_timeout => maps:get(request_timeout_ms, Conf),
        idle_timeout => maps:get(idle_timeout_ms, Conf),
        max_body => maps:get(max_body_bytes, Conf)
    },
    Http =
        case maps:get(tls, Api) of
            true -> Http0#{ssl => cluster_topology_http:ssl_options(#{host => maps:get(host, Api),
                ca_file => binary_to_list(maps:get(ca_file, Conf)),
                cert_file => str(maps:get(cert_file, Conf)), key_file => str(maps:get(key_file, Conf))})};
            false -> Http0
        end,
    S = #r{
        parent = Parent,
        kind = Kind,
        conf = Conf,
        reduce = Reduce,
        http = Http,
        obj_path = iolist_to_binary([Prefix, Coll, $/, q(ObjName)]),
        watch_path = iolist_to_binary([Prefix, Coll, <<"?fieldSelector=">>, q(<<"metadata.name=", ObjName/binary>>),
            <<"&watch=true&allowWatchBookmarks=true&timeoutSeconds=">>,
            integer_to_binary(maps:get(watch_timeout_s, Conf))])
    },
    get_object(S).

str(undefined) -> undefined;
str(B) -> binary_to_list(B).

q(B) -> uri_string:quote(B).

tell(#r{parent = P, kind = K}, Event) -> P ! {cluster_topology_read, K, Event}, ok.

%% The decoded object and the line it came from are garbage once reduced and told: collect them
%% now, or this process would keep a heap the size of the largest answer while it waits (often
%% minutes) in a blocking receive.
tell_object(#r{reduce = Reduce} = S, Obj, At) ->
    tell(S, {object, Reduce(Obj), At}),
    erlang:garbage_collect(),
    ok.

%% GET the object; on success watch from its resourceVersion.
get_object(S0) ->
    {Auth, S} = auth(S0),
    case cluster_topology_http:get(S#r.http, S#r.obj_path, Auth) of
        {ok, 200, _, Body} ->
            tell(S, reachable),
            case decode_object(Body) of
                {ok, Obj, RV} ->
                    tell_object(S, Obj, os:system_time(millisecond)),
                    watch(S#r{rv = RV, attempt = 0});
                {error, Why} ->
                    tell(S, {trouble, malformed, Why}),
                    retry(fun get_object/1, S)
            end;
        {ok, 404, _, _} ->
            tell(S, reachable),
            tell(S, gone),
            %% A watch without a resourceVersion announces the object once it is created.
            watch(S#r{rv = undefined, attempt = 0});
        {ok, Code, _, Body} ->
            status_trouble(S, Code, Body),
            retry(fun get_object/1, forget_token(Code, S));
        {error, Why} ->
            tell(S, {trouble, api_unreachable, describe(Why)}),
            retry(fun get_object/1, S)
    end.

watch(S0) ->
    {Auth, S} = auth(S0),
    Path =
        case S#r.rv of
            undefined -> S#r.watch_path;
            RV -> <<(S#r.watch_path)/binary, "&resourceVersion=", (q(RV))/binary>>
        end,
    case cluster_topology_http:watch_open(S#r.http, Path, Auth) of
        {ok, W} ->
            tell(S, reachable),
            stream(W, S#r{attempt = 0});
        {status, 410, _} ->
            get_object(S);
        {status, Code, Body} ->
            status_trouble(S, Code, Body),
            retry(fun get_object/1, forget_token(Code, S));
        {error, Why} ->
            tell(S, {trouble, api_unreachable, describe(Why)}),
            retry(fun watch/1, S)
    end.

stream(W, S) ->
    case cluster_topology_http:watch_next(W) of
        {line, <<>>, W1} ->
            stream(W1, S);
        {line, Line, W1} ->
            case event(Line) of
                {object, Type, Obj, RV} when Type =:= <<"ADDED">>; Type =:= <<"MODIFIED">> ->
                    tell_object(S, Obj, os:system_time(millisecond)),
                    stream(W1, S#r{rv = RV});
                {object, <<"DELETED">>, _Obj, RV} ->
                    tell(S, gone),
                    stream(W1, S#r{rv = RV});
                {object, <<"BOOKMARK">>, _Obj, RV} ->
                    stream(W1, S#r{rv = RV});
                {status, 410} ->
                    cluster_topology_http:close(W1),
                    get_object(S);
                {status, Code} ->
                    cluster_topology_http:close(W1),
                    tell(S, {trouble, api_error, iolist_to_binary(io_lib:format("the watch ended with an error (~p)", [Code]))}),
                    retry(fun get_object/1, S);
                {error, Why} ->
                    cluster_topology_http:close(W1),
                    tell(S, {trouble, malformed, Why}),
                    retry(fun get_object/1, S)
            end;
        done ->
            %% The server ended the watch (timeoutSeconds): resume at once.
            watch(S);
        {error, {event_too_large, _} = Why} ->
            tell(S, {trouble, malformed, describe(Why)}),
            retry(fun get_object/1, S);
        {error, _} ->
            %% The stream broke or went silent: resume after a short pause; trouble is reported
            %% if the API cannot be reached again.
            retry(fun watch/1, S#r{attempt = 0})
    end.

retry(F, #r{attempt = A, conf = C} = S) ->
    Ms = cluster_topology_config:backoff(A, maps:get(backoff_min_ms, C), maps:get(backoff_max_ms, C), fun rand:uniform/1),
    receive after Ms -> ok end,
    F(S#r{attempt = A + 1}).

status_trouble(S, Code, Body) ->
    Cause =
        case Code of
            401 -> unauthorized;
            403 -> forbidden;
            _ -> api_error
        end,
    Msg =
        case cluster_topology_json:decode(Body) of
            {ok, #{<<"message">> := M}} when is_binary(M) -> binary:part(M, 0, min(300, byte_size(M)));
            _ -> <<>>
        end,
    tell(S, {trouble, Cause, iolist_to_binary([integer_to_binary(Code), <<" ">>, Msg])}).

forget_token(401, S) -> S#r{token = undefined};
forget_token(_, S) -> S.

decode_object(Body) ->
    case cluster_topology_json:decode(Body) of
        {ok, #{<<"metadata">> := #{<<"resourceVersion">> := RV}} = Obj} when is_binary(RV) -> {ok, Obj, RV};
        {ok, _} -> {error, <<"the answer is not a Kubernetes object with a resourceVersion">>};
        {error, Why} -> {error, describe(Why)}
    end.

event(Line) ->
    case cluster_topology_json:decode(Line) of
        {ok, #{<<"type">> := <<"ERROR">>, <<"object">> := O}} ->
            {status, case O of #{<<"code">> := C} -> C; _ -> unknown end};
        {ok, #{<<"type">> := T, <<"object">> := #{<<"metadata">> := #{<<"resourceVersion">> := RV}} = O}}
                when is_binary(T), is_binary(RV) ->
            {object, T, O, RV};
        {ok, _} ->
            {error, <<"a watch event is not shaped like one">>};
        {error, Why} ->
            {error, describe(Why)}
    end.

describe(B) when is_binary(B) -> B;
describe(T) -> iolist_to_binary(io_lib:format("~0p", [T])).

%% The Authorization header, from the token file (re-read when the file changed).
auth(#r{conf = #{token_file := undefined}} = S) ->
    {[], S};
auth(#r{conf = #{token_file := File}, token = Cached} = S) ->
    Stamp =
        case file:read_file_info(File, [{time, posix}]) of
            {ok, I} -> {element(2, I), element(6, I), element(7, I), element(12, I)};
            _ -> missing
        end,
    case Cached of
        {Stamp, Token} when Stamp =/= missing ->
            {[{<<"Authorization">>, <<"Bearer ", Token/binary>>}], S};
        _ ->
            case file:read_file(File) of
                {ok, Raw} ->
                    Token = string:trim(Raw),
                    {[{<<"Authorization">>, <<"Bearer ", Token/binary>>}], S#r{token = {Stamp, Token}}};
                {error, Why} ->
                    tell(S, {trouble, unauthorized, describe({token_file, File, Why})}),
                    {[], S#r{token = undefined}}
            end
    end.
