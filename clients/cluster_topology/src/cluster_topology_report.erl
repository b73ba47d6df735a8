%% @doc Writes this member's report (a ClusterTopologyMember, docs/status-protocol.md §8): the
%% last child of `cluster_topology_sup' (option `report', on by default).
%%
%% The round server tells it what it knows (the list, the last failed-connect reason per peer,
%% the self check's inputs, its trouble, the status resourceVersion, this pod's uid from its own
%% `status.peers' entry) whenever that changes; this process watches the connections itself
%% (`net_kernel:monitor_nodes/1'), builds the view (`cluster_topology_member:view/1') and writes
%% it as the budget says (`cluster_topology_member:plan/3'): only when it changed, at most once
%% per 10 s (coalesced), renewed every 5 minutes. One request, a server-side apply, made in a
%% helper process so that this one always answers `sys' and its supervisor.
%%
%% A write refused (401/403: no permission; 404: the kind is not installed) or failed (the API
%% unreachable, a 5xx) is said once, as one warning (again only after a write succeeded in
%% between), and tried again at the budget's pace (5 minutes after a refusal, 30 s after a failure). Reporting never connects or disconnects anything, and its
%% failures never crash the client: a pod whose uid is not known yet (its pod is not listed)
%% writes nothing.
-module(cluster_topology_report).
-behaviour(gen_server).

-export([start_link/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2, code_change/3]).
-export_type([facts/0]).

-define(FIELD_MANAGER, <<"cluster_topology">>).

%% What the round server tells: see `cluster_topology_member:input()' (`peers', `resource_version',
%% `reasons', `invalid', `trouble') and `uid', this pod's uid (undefined: not listed).
-type facts() :: #{
    peers := undefined | [#{node := binary(), pod := binary() | undefined}],
    uid := binary() | undefined,
    resource_version := binary() | undefined,
    reasons := #{binary() => binary()},
    invalid := [binary()],
    trouble := undefined | #{binary() => binary()}
}.

-record(s, {
    sup :: pid(),
    conf :: cluster_topology_config:config(),
    topology :: binary(),
    http :: cluster_topology_http:conf(),
    facts :: undefined | facts(),
    history = #{} :: cluster_topology_member:history(),
    timer :: undefined | reference(),
    %% The write in flight: its helper's reference, monitor, the view sent, and when (ms, monotonic).
    request :: undefined | {reference(), reference(), cluster_topology_member:view(), integer(), integer()},
    %% A failure was said; nothing more is said until a write succeeds.
    warned = false :: boolean(),
    telemetry :: boolean()
}).

%% @doc Starts the writer of the client under supervisor `Sup'.
-spec start_link(pid(), cluster_topology_config:config()) -> {ok, pid()} | {error, term()}.
start_link(Sup, Conf) ->
    gen_server:start_link(?MODULE, {Sup, Conf}, []).

%% @private
-spec init({pid(), cluster_topology_config:config()}) -> {ok, #s{}}.
init({Sup, #{namespace := NS, name := Name} = Conf}) ->
    Topology = <<NS/binary, "/", Name/binary>>,
    logger:set_process_metadata(#{topology => Topology, reader => report}),
    _ = net_kernel:monitor_nodes(true),
    %% The server is found once the supervisor has started every child (it answers then).
    self() ! subscribe,
    {ok, #s{sup = Sup, conf = Conf, topology = Topology, http = cluster_topology_reader:http_conf(Conf),
        telemetry = cluster_topology_telemetry:available()}}.

%% @private
-spec handle_call(term(), gen_server:from(), #s{}) -> {reply, term(), #s{}}.
handle_call(_, _From, S) ->
    {reply, {error, unknown_call}, S}.

%% @private
-spec handle_cast(term(), #s{}) -> {noreply, #s{}}.
handle_cast(_, S) ->
    {noreply, S}.

%% @private
-spec handle_info(term(), #s{}) -> {noreply, #s{}}.
handle_info(subscribe, #s{sup = Sup} = S) ->
    case cluster_topology_sup:server(Sup) of
        Pid when is_pid(Pid) -> gen_server:cast(Pid, {report_to, self()});
        undefined -> _ = erlang:send_after(100, self(), subscribe), ok
    end,
    {noreply, S};
handle_info({cluster_topology_facts, Facts}, S) ->
    {noreply, ask(S#s{facts = Facts})};
handle_info({Up, _Node}, S) when Up =:= nodeup; Up =:= nodedown ->
    {noreply, ask(S)};
handle_info(due, S) ->
    {noreply, ask(S#s{timer = undefined})};
handle_info({Ref, Answer}, #s{request = {Ref, Mon, View, At, T0}} = S) ->
    erlang:demonitor(Mon, [flush]),
    {noreply, ask(done(Answer, View, At, T0, S#s{request = undefined}))};
handle_info({'DOWN', Mon, process, _, Why}, #s{request = {_, Mon, View, At, T0}} = S) ->
    {noreply, ask(done({error, {crashed, Why}}, View, At, T0, S#s{request = undefined}))};
handle_info(_, S) ->
    {noreply, S}.

%% @private
-spec terminate(term(), #s{}) -> ok.
terminate(_, _) ->
    ok.

%% @private
-spec code_change(term(), #s{}, term()) -> {ok, #s{}}.
code_change(_, S, _) ->
    {ok, S}.

%% ---------------------------------------------------------------------------------------------

%% Asked on every change and when the time it was given comes: write, wait, or nothing.
ask(#s{request = {_, _, _, _, _}} = S) ->
    %% One write at a time; its answer asks again.
    S;
ask(#s{facts = #{uid := Uid} = F, conf = C} = S) when is_binary(Uid) ->
    View = cluster_topology_member:view(#{
        node => atom_to_binary(node(), utf8),
        pod => maps:get(pod_name, C),
        peers => maps:get(peers, F),
        resource_version => maps:get(resource_version, F),
        connected => [atom_to_binary(N, utf8) || N <- nodes([visible, hidden])],
        reasons => maps:get(reasons, F),
        invalid => maps:get(invalid, F),
        trouble => maps:get(trouble, F)
    }),
    Now = erlang:monotonic_time(millisecond),
    case cluster_topology_member:plan(S#s.history, View, Now) of
        write -> write(View, Uid, Now, cancel(S));
        {wait, At} -> at(At - Now, S);
        {idle, At} -> at(At - Now, S)
    end;
ask(S) ->
    %% No list yet, or its pod is not listed (no uid): nothing to write.
    cancel(S).

cancel(#s{timer = undefined} = S) -> S;
cancel(#s{timer = T} = S) -> _ = erlang:cancel_timer(T), S#s{timer = undefined}.

at(Ms, S) ->
    S1 = cancel(S),
    S1#s{timer = erlang:send_after(max(0, Ms), self(), due)}.

write(View, Uid, Now, #s{conf = #{namespace := NS, name := T, pod_name := Pod} = C, http = Http} = S) ->
    Id = #{namespace => NS, topology => T, pod => Pod, uid => Uid},
    Body = cluster_topology_json:encode(cluster_topology_member:report(Id, View, os:system_time(millisecond))),
    Path = [maps:get(prefix, maps:get(api, C)),
        cluster_topology_member:path(NS, cluster_topology_member:object_name(Pod, T), ?FIELD_MANAGER)],
    Auth = auth(C),
    Self = self(),
    Ref = make_ref(),
    {_, Mon} = spawn_monitor(fun() ->
        Self ! {Ref, cluster_topology_http:request(Http, <<"PATCH">>, Path, Auth,
            {<<"application/apply-patch+yaml">>, Body})}
    end),
    S#s{request = {Ref, Mon, View, Now, erlang:monotonic_time()}}.

%% The token is read for each write (projected tokens rotate); without it the write goes out
%% without one and is refused, which is said once like any refusal.
auth(#{token_file := undefined}) ->
    [];
auth(#{token_file := File}) ->
    case file:read_file(File) of
        {ok, Raw} -> [{<<"Authorization">>, [<<"Bearer ">>, string:trim(Raw)]}];
        {error, _} -> []
    end.

done(Answer, View, At, T0, #s{history = H} = S) ->
    Outcome = cluster_topology_member:outcome(Answer),
    S1 = S#s{history = cluster_topology_member:record_attempt(H, View, At, Outcome)},
    S2 = emit(Outcome, Answer, View, erlang:monotonic_time() - T0, S1),
    case {Outcome, S2#s.warned} of
        {ok, true} ->
            logger:notice("cluster_topology: this member's report is written again"),
            S2#s{warned = false};
        {ok, false} ->
            S2;
        {_, true} ->
            S2;
        {_, false} ->
            #{renew_ms := Renew, retry_ms := Retry} = cluster_topology_member:budget(),
            Again = case Outcome of forbidden -> Renew; failed -> Retry end,
            logger:warning("cluster_topology: cannot write this member's report (~s); connections are not "
                "affected; trying again in ~b s, and saying nothing more until a write succeeds",
                [failure(Answer), Again div 1000], #{report => Outcome}),
            S2#s{warned = true}
    end.

failure({ok, 404, _, Body}) ->
    [<<"404: the ClusterTopologyMember kind is not installed, or the namespace is gone: ">>, message(Body)];
failure({ok, Code, _, Body}) when Code =:= 401; Code =:= 403 ->
    [integer_to_binary(Code), <<": not allowed - grant create, update and patch on clustertopologymembers "
        "to this pod's service account (README.md, Permissions): ">>, message(Body)];
failure({ok, Code, _, Body}) ->
    [integer_to_binary(Code), <<": ">>, message(Body)];
failure({error, Why}) ->
    io_lib:format("the API server did not answer: ~0p", [Why]).

message(Body) ->
    case cluster_topology_json:decode(Body) of
        {ok, #{<<"message">> := M}} when is_binary(M) -> binary:part(M, 0, min(300, byte_size(M)));
        _ -> <<>>
    end.

%% [cluster_topology, report]: each write, with its outcome.
emit(_, _, _, _, #s{telemetry = false} = S) ->
    S;
emit(Outcome, Answer, View, Took, #s{topology = T} = S) ->
    Code = case Answer of {ok, C, _, _} -> C; _ -> undefined end,
    Meta = #{topology => T, result => Outcome, status_code => Code,
        connected_of_listed => maps:get(<<"connectedOfListed">>, View)},
    case cluster_topology_telemetry:execute(true, [cluster_topology, report], #{duration => Took}, Meta) of
        ok -> S;
        {error, _} -> S#s{telemetry = false}
    end.
