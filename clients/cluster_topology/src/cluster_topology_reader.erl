%% @doc Follows one Kubernetes object (the ClusterTopology, or the operator's Lease) as
%% docs/status-protocol.md §1 says: GET, then WATCH from the GET's resourceVersion (narrowed to
%% the object with a fieldSelector, bookmarks on), resuming from the last resourceVersion seen.
%%
%% A `gen_statem' with three states:
%%
%%   getting   a GET of the object is in flight
%%   watching  a WATCH from the last resourceVersion is open (or being opened)
%%   backoff   waiting (a state timeout) before the next GET or WATCH
%%
%% Every retry goes through `cluster_topology_backoff' (capped, jittered, exponential; starting
%% over after a healthy period): a failed GET or WATCH, a broken or silent stream, a 410 Gone
%% (then the object is read again), and a watch that the server closes at once without a word.
%% A watch that ran its course (the server's timeoutSeconds) is resumed at once.
%%
%% The requests run one at a time in a linked helper process, which does the blocking socket
%% work, decodes each answer and reduces it to what the server keeps (the decoded object is
%% garbage there as soon as it is reduced). So the reader itself always answers system
%% messages (`sys:get_state/1') and its supervisor.
%%
%% What it learns goes to the round server as `{cluster_topology_read, Kind, Event}' (see
%% `event()'). The bearer token is read from its file before every request, so a rotated token
%% (and the one after a 401) is used as soon as it is there, and the token is never kept here.
-module(cluster_topology_reader).
-behaviour(gen_statem).

-include_lib("kernel/include/logger.hrl").

-export([start_link/3, start_link/4, http_conf/1]).
-export([callback_mode/0, init/1, getting/3, watching/3, backoff/3, terminate/3, code_change/4]).
-export_type([kind/0, event/0, target/0]).

%% A watch that the server closes sooner than this, without an event, closed "at once".
-define(MIN_WATCH_MS, 1000).

-type kind() :: topology | lease.
%% Where events go: the round server, or the supervisor under which to find it.
-type target() :: pid() | {sup, pid()}.
-type trouble() :: api_unreachable | unauthorized | forbidden | api_error | malformed.
%% object: the object as it is now, as the kind's reduction made it (for the topology:
%%   `cluster_topology_status:interpret/2''s answer; for the Lease: its spec), the time it was
%%   received (system time, ms) and how long decoding and reducing took (native time units);
%% gone: the object does not exist (404, or a DELETED event);
%% reachable: the API answered (a GET or a watch was accepted);
%% trouble: a failure to report;
%% retry: the next request waits DelayMs (`closed': a watch that ran its course, resumed at once).
-type event() ::
    {object, term(), integer(), integer()}
    | gone
    | reachable
    | {trouble, trouble(), binary()}
    | {retry, cluster_topology_backoff:cause() | closed, non_neg_integer()}.
-type state() :: getting | watching | backoff.

-record(d, {
    kind :: kind(),
    conf :: cluster_topology_config:config(),
    target :: target(),
    http :: map(),
    obj_path :: binary(),
    watch_path :: binary(),
    rv :: binary() | undefined,
    backoff :: cluster_topology_backoff:backoff(),
    %% The request that runs now (its helper's messages carry this reference).
    request :: reference() | undefined,
    opened_at :: integer() | undefined,
    heard = false :: boolean(),
    now :: fun(() -> integer()),
    uniform :: fun((pos_integer()) -> pos_integer())
}).

%% @doc Starts a reader of `Kind' for the client configured by `Conf'; events go to `Target'.
-spec start_link(kind(), cluster_topology_config:config(), target()) -> gen_statem:start_ret().
start_link(Kind, Conf, Target) ->
    start_link(Kind, Conf, Target, #{}).

%% @doc As `start_link/3'; `Opts' replaces the clock (`now': monotonic milliseconds) and the
%% random numbers (`uniform': 1..N) of the backoff, for tests.
-spec start_link(kind(), cluster_topology_config:config(), target(),
    #{now => fun(() -> integer()), uniform => fun((pos_integer()) -> pos_integer())}) ->
    gen_statem:start_ret().
start_link(Kind, Conf, Target, Opts) ->
    gen_statem:start_link(?MODULE, {Kind, Conf, Target, Opts}, []).


%% @doc How the client's requests reach the API server (address, TLS, time and size limits), from
%% its configuration: the readers' and the report writer's.
-spec http_conf(cluster_topology_config:config()) -> cluster_topology_http:conf().
http_conf(#{api := #{host := Host, port := Port, tls := TLS}} = Conf) ->
    Http0 = #{
        host => Host,
        port => Port,
        tls => TLS,
        connect_timeout => maps:get(connect_timeout_ms, Conf),
        recv_timeout => maps:get(request_timeout_ms, Conf),
        idle_timeout => maps:get(idle_timeout_ms, Conf),
        max_body => maps:get(max_body_bytes, Conf)
    },
    case TLS of
        true -> Http0#{ssl => cluster_topology_http:ssl_options(#{host => Host,
            ca_file => binary_to_list(maps:get(ca_file, Conf)),
            cert_file => str(maps:get(cert_file, Conf)), key_file => str(maps:get(key_file, Conf))})};
        false -> Http0
    end.

%% @private
-spec callback_mode() -> gen_statem:callback_mode_result().
callback_mode() -> [state_functions, state_enter].

%% @private
-spec init({kind(), cluster_topology_config:config(), target(), map()}) ->
    gen_statem:init_result(state(), #d{}).
init({Kind, #{api := Api, namespace := NS, name := Name} = Conf, Target, Opts}) ->
    logger:set_process_metadata(#{topology => <<NS/binary, "/", Name/binary>>, reader => Kind}),
    {Coll, ObjName} =
        case Kind of
            topology ->
                {[<<"/apis/cluster.netzlive.io/v1alpha1/namespaces/">>, q(NS), <<"/clustertopologies">>], Name};
            lease ->
                {[<<"/apis/coordination.k8s.io/v1/namespaces/">>, q(NS), <<"/leases">>], <<"clustertopology.", Name/binary>>}
        end,
    #{prefix := Prefix} = Api,
    Http = http_conf(Conf),
    D = #d{
        kind = Kind,
        conf = Conf,
        target = Target,
        http = Http,
        obj_path = iolist_to_binary([Prefix, Coll, $/, q(ObjName)]),
        watch_path = iolist_to_binary([Prefix, Coll, <<"?fieldSelector=">>, q(<<"metadata.name=", ObjName/binary>>),
            <<"&watch=true&allowWatchBookmarks=true&timeoutSeconds=">>,
            integer_to_binary(maps:get(watch_timeout_s, Conf))]),
        backoff = cluster_topology_backoff:new(maps:get(backoff_min_ms, Conf), maps:get(backoff_max_ms, Conf)),
        now = maps:get(now, Opts, fun() -> erlang:monotonic_time(millisecond) end),
        uniform = maps:get(uniform, Opts, fun rand:uniform/1)
    },
    {ok, getting, D}.

%% ---------------------------------------------------------------------------------------------
%% States

%% @private
-spec getting(gen_statem:event_type(), term(), #d{}) -> gen_statem:event_handler_result(state()).
getting(enter, _, D) ->
    {keep_state, request(get, D)};
getting(info, {Ref, Result}, #d{request = Ref} = D0) ->
    D = D0#d{request = undefined},
    case Result of
        {object, Meaning, RV, Took} ->
            D1 = tell_object(Meaning, Took, tell(reachable, D)),
            %% The reduced object passed through this process: drop it from the heap.
            {next_state, watching, D1#d{rv = RV}, [hibernate]};
        not_found ->
            %% A watch without a resourceVersion announces the object once it is created.
            {next_state, watching, tell(gone, tell(reachable, D#d{rv = undefined}))};
        {malformed, Why} ->
            retry(malformed, get, tell({trouble, malformed, Why}, tell(reachable, D)));
        {refused, Code, Message} ->
            refused(Code, Message, D);
        {unreachable, Why} ->
            retry(unreachable, get, tell({trouble, api_unreachable, Why}, D))
    end;
getting(Type, Content, D) ->
    other(Type, Content, D).

%% @private
-spec watching(gen_statem:event_type(), term(), #d{}) -> gen_statem:event_handler_result(state()).
watching(enter, _, D) ->
    {keep_state, request(watch, D#d{opened_at = undefined, heard = false})};
watching(info, {Ref, Message}, #d{request = Ref} = D) ->
    watch_message(Message, D);
watching(Type, Content, D) ->
    other(Type, Content, D).

watch_message(opened, D) ->
    {keep_state, tell(reachable, D#d{opened_at = now(D)})};
watch_message({event, {object, Meaning, RV, Took}}, D) ->
    {keep_state, tell_object(Meaning, Took, D#d{rv = RV, heard = true}), [hibernate]};
watch_message({event, {deleted, RV}}, D) ->
    {keep_state, tell(gone, D#d{rv = RV, heard = true})};
watch_message({event, {bookmark, RV}}, D) ->
    {keep_state, D#d{rv = RV, heard = true}};
watch_message(Last, D0) ->
    %% The helper has ended: the watch was refused, failed or ended.
    D = D0#d{request = undefined},
    case Last of
        {refused, 410, _} ->
            retry(gone, get, D);
        {refused, Code, Message} ->
            refused(Code, Message, D);
        {unreachable, Why} ->
            retry(unreachable, watch, tell({trouble, api_unreachable, Why}, D));
        {ended, done} ->
            case D#d.heard orelse now(D) - D#d.opened_at >= ?MIN_WATCH_MS of
                true -> {repeat_state, tell({retry, closed, 0}, D)};
                false -> retry(closed_early, watch, D)
            end;
        {ended, gone} ->
            retry(gone, get, D);
        {ended, {api_error, Code}} ->
            Detail = iolist_to_binary(io_lib:format("the watch ended with an error (~p)", [Code])),
            retry(api_error, get, tell({trouble, api_error, Detail}, D));
        {ended, {malformed, Why}} ->
            retry(malformed, get, tell({trouble, malformed, Why}, D));
        {ended, idle} ->
            retry(idle, watch, D);
        {ended, {broken, _}} ->
            %% Trouble is reported if the API cannot be reached again.
            retry(broken, watch, D)
    end.

%% @private
-spec backoff(gen_statem:event_type(), term(), #d{}) -> gen_statem:event_handler_result(state()).
backoff(enter, _, _) ->
    keep_state_and_data;
backoff(state_timeout, get, D) ->
    {next_state, getting, D};
backoff(state_timeout, watch, D) ->
    {next_state, watching, D};
backoff(Type, Content, D) ->
    other(Type, Content, D).

%% A helper's message from a request given up on, or a stray message: ignored.
other({call, From}, _, _) ->
    {keep_state_and_data, [{reply, From, {error, unknown_call}}]};
other(_, _, _) ->
    keep_state_and_data.

%% @private
-spec terminate(term(), state(), #d{}) -> ok.
terminate(_, _, _) -> ok.

%% @private
-spec code_change(term(), state(), #d{}, term()) -> {ok, state(), #d{}}.
code_change(_, State, D, _) -> {ok, State, D}.

%% ---------------------------------------------------------------------------------------------

retry(Cause, Next, #d{backoff = B0} = D) ->
    {Delay, B} = cluster_topology_backoff:next(B0, Cause, now(D), D#d.uniform),
    %% The macro (not logger:debug/2) carries this module in its metadata, so that
    %% logger:set_module_level(cluster_topology_reader, debug) shows these lines.
    ?LOG_DEBUG("cluster_topology: ~s again in ~b ms (~s)", [Next, Delay, Cause]),
    {next_state, backoff, tell({retry, Cause, Delay}, D#d{backoff = B}), [{state_timeout, Delay, Next}]}.

refused(Code, Message, D) ->
    Cause =
        case Code of
            401 -> unauthorized;
            403 -> forbidden;
            _ -> api_error
        end,
    retry(Cause, get, tell({trouble, Cause, iolist_to_binary([integer_to_binary(Code), <<" ">>, Message])}, D)).

now(#d{now = Now}) -> Now().

str(undefined) -> undefined;
str(B) -> binary_to_list(B).

q(B) -> uri_string:quote(B).

tell(Event, #d{target = {sup, Sup}} = D) ->
    case cluster_topology_sup:server(Sup) of
        Pid when is_pid(Pid) -> tell(Event, D#d{target = Pid});
        %% The server is being started again; this reader will be too (rest_for_one).
        undefined -> D
    end;
tell(Event, #d{target = Pid, kind = K} = D) ->
    Pid ! {cluster_topology_read, K, Event},
    D.

tell_object(Meaning, Took, D) ->
    tell({object, Meaning, os:system_time(millisecond), Took}, D).

%% Starts the helper for a GET or a WATCH from the last resourceVersion.
request(What, #d{kind = Kind, conf = Conf, http = Http} = D0) ->
    {Auth, D} = auth(D0),
    Path =
        case {What, D#d.rv} of
            {get, _} -> D#d.obj_path;
            {watch, undefined} -> D#d.watch_path;
            {watch, RV} -> <<(D#d.watch_path)/binary, "&resourceVersion=", (q(RV))/binary>>
        end,
    Reduce = reducer(Kind, Conf),
    Reader = self(),
    Ref = make_ref(),
    _ = proc_lib:spawn_link(fun() -> helper(What, Reader, Ref, Http, Path, Auth, Reduce) end),
    D#d{request = Ref}.

%% What of a decoded object the server gets: its meaning, not the whole object (the server keeps
%% it for long, and a large decoded object is garbage in the helper as soon as it is reduced).
reducer(topology, #{max_peers := Max}) -> fun(Obj) -> cluster_topology_status:interpret(Obj, Max) end;
reducer(lease, _) -> fun(Obj) -> maps:with([<<"spec">>], Obj) end.

%% The Authorization header, from the token file.
auth(#d{conf = #{token_file := undefined}} = D) ->
    {[], D};
auth(#d{conf = #{token_file := File}} = D) ->
    case file:read_file(File) of
        {ok, Raw} ->
            {[{<<"Authorization">>, [<<"Bearer ">>, string:trim(Raw)]}], D};
        {error, Why} ->
            {[], tell({trouble, unauthorized, describe({token_file, File, Why})}, D)}
    end.

%% ---------------------------------------------------------------------------------------------
%% The helper: one request, its answer told to the reader as `{Ref, Message}'.

helper(get, Reader, Ref, Http, Path, Auth, Reduce) ->
    Reader ! {Ref, get_object(Http, Path, Auth, Reduce)};
helper(watch, Reader, Ref, Http, Path, Auth, Reduce) ->
    case cluster_topology_http:watch_open(Http, Path, Auth) of
        {ok, W} ->
            Reader ! {Ref, opened},
            Reader ! {Ref, {ended, stream(Reader, Ref, W, Reduce)}};
        {status, Code, Body} ->
            Reader ! {Ref, {refused, Code, status_message(Body)}};
        {error, Why} ->
            Reader ! {Ref, {unreachable, describe(Why)}}
    end.

get_object(Http, Path, Auth, Reduce) ->
    case cluster_topology_http:get(Http, Path, Auth) of
        {ok, 200, _, Body} ->
            T0 = erlang:monotonic_time(),
            case decode_object(Body) of
                {ok, Obj, RV} -> {object, Reduce(Obj), RV, erlang:monotonic_time() - T0};
                {error, Why} -> {malformed, Why}
            end;
        {ok, 404, _, _} ->
            not_found;
        {ok, Code, _, Body} ->
            {refused, Code, status_message(Body)};
        {error, Why} ->
            case too_large(Why) of
                true -> {malformed, describe(Why)};
                false -> {unreachable, describe(Why)}
            end
    end.

%% An answer refused for its size (max_body_bytes), not for a failed transport.
too_large({body_too_large, _}) -> true;
too_large({body_too_large, _, _}) -> true;
too_large({chunk_too_large, _, _}) -> true;
too_large({event_too_large, _}) -> true;
too_large(_) -> false.

%% Tells every event of the watch; returns how it ended.
stream(Reader, Ref, W, Reduce) ->
    case cluster_topology_http:watch_next(W) of
        {line, <<>>, W1} ->
            stream(Reader, Ref, W1, Reduce);
        {line, Line, W1} ->
            T0 = erlang:monotonic_time(),
            case event(Line) of
                {object, Type, Obj, RV} when Type =:= <<"ADDED">>; Type =:= <<"MODIFIED">> ->
                    Reader ! {Ref, {event, {object, Reduce(Obj), RV, erlang:monotonic_time() - T0}}},
                    %% The decoded object and its line are garbage now: do not keep a heap the
                    %% size of the largest event while the watch waits (often minutes).
                    erlang:garbage_collect(),
                    stream(Reader, Ref, W1, Reduce);
                {object, <<"DELETED">>, _, RV} ->
                    Reader ! {Ref, {event, {deleted, RV}}},
                    stream(Reader, Ref, W1, Reduce);
                {object, <<"BOOKMARK">>, _, RV} ->
                    Reader ! {Ref, {event, {bookmark, RV}}},
                    stream(Reader, Ref, W1, Reduce);
                {object, Type, _, _} ->
                    cluster_topology_http:close(W1),
                    {malformed, <<"a watch event of unknown type ", Type/binary>>};
                {status, 410} ->
                    cluster_topology_http:close(W1),
                    gone;
                {status, Code} ->
                    cluster_topology_http:close(W1),
                    {api_error, Code};
                {error, Why} ->
                    cluster_topology_http:close(W1),
                    {malformed, Why}
            end;
        done ->
            done;
        {error, timeout} ->
            idle;
        {error, Why} ->
            case too_large(Why) of
                true -> {malformed, describe(Why)};
                false -> {broken, describe(Why)}
            end
    end.

status_message(Body) ->
    case cluster_topology_json:decode(Body) of
        {ok, #{<<"message">> := M}} when is_binary(M) -> binary:part(M, 0, min(300, byte_size(M)));
        _ -> <<>>
    end.

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
