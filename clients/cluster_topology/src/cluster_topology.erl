%% @doc Cluster membership from a ClusterTopology, inside the VM: add
%% `cluster_topology:child_spec(Opts)' to a supervisor (Elixir: `{:cluster_topology, opts}').
%%
%% The client reads its one ClusterTopology (GET + WATCH), connects every listed peer with
%% `net_kernel:connect_node/1' and disconnects the peers it connected that are no longer listed.
%% It never disconnects because of its own trouble (API unreachable, 401/403, object deleted,
%% operator silent): it keeps its connections and reports the trouble through `state/0,1',
%% `logger', `:telemetry' events and the hook. See README.md for the options.
%%
%% This module is the API and the round server; `cluster_topology_sup' holds the server and
%% the readers (`cluster_topology_reader') that tell it what they read.
-module(cluster_topology).
-behaviour(gen_server).

-export([start_link/1, child_spec/1, state/0, state/1, stop/0, stop/1]).
-export([start_server/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2, code_change/3]).
-export_type([options/0, hook_event/0, report/0, server/0]).

-type options() :: cluster_topology_config:options().
%% The client: its registered name (`cluster_topology' by default), its server's pid, or the
%% pid `start_link/1' returned.
-type server() :: atom() | pid().
%% What the hook gets (README.md, "State, logs and the hook").
-type hook_event() :: #{event := status | round | trouble | trouble_cleared | liveness | self_check | nodedown,
    atom() => term()}.
%% What `state/0,1' answers (README.md, "State, logs and the hook").
-type report() :: #{
    topology := #{namespace := binary(), name := binary()},
    self := binary(),
    pod := binary() | undefined,
    peers := [map()],
    remembered := [binary()],
    status := map(),
    trouble := undefined | #{cause := atom(), detail := binary(), since := integer()},
    liveness := map(),
    self_check := map(),
    last_round := undefined | map(),
    round_running := boolean(),
    nodedowns := non_neg_integer(),
    reads := #{cluster_topology_reader:kind() => map()},
    hook := none | attached | detached,
    telemetry := boolean()
}.

-record(s, {
    sup :: pid(),
    conf :: cluster_topology_config:config(),
    %% <<"namespace/name">>: logger and telemetry metadata.
    topology :: binary(),
    self :: binary(),
    hook :: cluster_topology_config:hook() | undefined,
    hook_detached = false :: boolean(),
    telemetry :: boolean(),
    status :: undefined | cluster_topology_status:current(),
    status_at :: undefined | integer(),
    %% A current status read while the operator's Lease is stale: not acted on (it is not
    %% current, docs/status-protocol.md §4) until the Lease is live or unknown again.
    held :: undefined | {object, term(), integer(), term()},
    unknown :: undefined | binary(),
    trouble :: undefined | map(),
    %% When the trouble of its cause began (monotonic, native units): its telemetry duration.
    trouble_began :: undefined | integer(),
    lease :: undefined | missing | {unreadable, binary()} | map(),
    liveness :: map(),
    liveness_timer :: undefined | reference(),
    remembered = [] :: [binary()],
    %% The list the last round was for: a node not in it is new, and is connected first.
    previous = [] :: [binary()],
    %% The round in flight: its monitor, when its list was seen, its plan, when it began
    %% (system ms) and the monotonic time then (native).
    running :: undefined | {reference(), integer() | undefined, cluster_topology_round:plan(), integer(), integer()},
    pending :: undefined | {[binary()], integer() | undefined},
    last_round :: undefined | map(),
    retry_timer :: undefined | reference(),
    self_check :: map(),
    nodedowns = 0 :: non_neg_integer(),
    reads = #{} :: #{cluster_topology_reader:kind() => map()},
    %% The last failure per listed peer it is not connected to (the member report's reasons).
    link_reasons = #{} :: #{binary() => binary()},
    %% Nodes a round disconnected because the list dropped them, and when their watch ends
    %% (monotonic ms): one that is connected again meanwhile while still unlisted (OTP's `global'
    %% connects the nodes its peers hold) is disconnected again (cluster_topology_round:departed/4).
    departed = #{} :: #{binary() => integer()},
    %% The member report's writer (`cluster_topology_report') and what it was told last.
    reporter :: undefined | pid(),
    told :: undefined | cluster_topology_report:facts()
}).

%% ---------------------------------------------------------------------------------------------
%% API

%% @doc Starts the client (its supervisor, which starts the server and the readers); the server
%% is registered as `cluster_topology' unless `register' says otherwise. `ignore' where the
%% client is not to run (option `enabled'; by default: out of a pod, with no `api_url'), with
%% one log line saying why.
-spec start_link(options()) -> {ok, pid()} | ignore | {error, term()}.
start_link(Opts) ->
    case cluster_topology_config:parse(Opts) of
        {ok, Conf} ->
            cluster_topology_sup:start_link(Conf);
        {ignore, Why} ->
            logger:notice("cluster_topology: not started: ~s", [Why]),
            ignore;
        {error, Msg} ->
            logger:error("cluster_topology: ~s", [Msg]),
            {error, {bad_options, Msg}}
    end.

%% @private The round server, started by `cluster_topology_sup'.
-spec start_server(pid(), cluster_topology_config:config()) -> {ok, pid()} | {error, term()}.
start_server(Sup, Conf) ->
    case maps:get(register, Conf) of
        false -> gen_server:start_link(?MODULE, {Sup, Conf}, []);
        Name -> gen_server:start_link({local, Name}, ?MODULE, {Sup, Conf}, [])
    end.

%% @doc A child specification for a supervisor (Erlang or Elixir): the client is a supervisor.
-spec child_spec(options()) -> supervisor:child_spec().
child_spec(Opts) ->
    Id =
        case Opts of
            #{register := R} -> R;
            L when is_list(L) -> proplists:get_value(register, L, ?MODULE);
            _ -> ?MODULE
        end,
    #{id => {?MODULE, Id}, start => {?MODULE, start_link, [Opts]}, restart => permanent,
      shutdown => infinity, type => supervisor, modules => [cluster_topology_sup]}.

%% @doc What the client knows and did: see README.md, "State".
-spec state() -> report().
state() -> state(?MODULE).

%% @doc As `state/0', for the client `Server'.
-spec state(server()) -> report().
state(Server) -> gen_server:call(server(Server), state).

%% @doc Stops the client (its supervisor; a user's supervisor may start it again).
-spec stop() -> ok.
stop() -> stop(?MODULE).

%% @doc As `stop/0', for the client `Server'.
-spec stop(server()) -> ok.
stop(Server) ->
    Sup =
        case is_client_sup(Server) of
            true -> Server;
            false -> gen_server:call(Server, supervisor)
        end,
    gen_server:stop(Sup).

server(Ref) ->
    case is_client_sup(Ref) of
        true -> cluster_topology_sup:server(Ref);
        false -> Ref
    end.

is_client_sup(Pid) when is_pid(Pid), node(Pid) =:= node() ->
    case erlang:process_info(Pid, dictionary) of
        {dictionary, D} -> proplists:get_value('$initial_call', D) =:= {supervisor, cluster_topology_sup, 1};
        undefined -> false
    end;
is_client_sup(_) ->
    false.

%% ---------------------------------------------------------------------------------------------
%% gen_server

%% @private
-spec init({pid(), cluster_topology_config:config()}) -> {ok, #s{}}.
init({Sup, #{namespace := NS, name := Name} = Conf}) ->
    Topology = <<NS/binary, "/", Name/binary>>,
    logger:set_process_metadata(#{topology => Topology}),
    ok = net_kernel:monitor_nodes(true, [nodedown_reason]),
    S = #s{
        sup = Sup,
        conf = Conf,
        topology = Topology,
        self = atom_to_binary(node(), utf8),
        hook = maps:get(hook, Conf),
        telemetry = cluster_topology_telemetry:available(),
        liveness = #{value => unknown, reason => <<"the operator's Lease has not been read yet">>},
        self_check = #{ok => unknown, problem => <<"no status read yet">>}
    },
    node() =:= nonode@nohost andalso
        logger:error("cluster_topology: the local node is not distributed (start it with -name or -sname); it cannot connect to peers"),
    {ok, S}.

%% @private
-spec handle_call(term(), gen_server:from(), #s{}) -> {reply, term(), #s{}} | {reply, term(), #s{}, hibernate}.
handle_call(state, _From, S) ->
    {reply, report(S), S, hibernate};
handle_call(supervisor, _From, S) ->
    {reply, S#s.sup, S};
handle_call(_, _From, S) ->
    {reply, {error, unknown_call}, S}.

%% @private
-spec handle_cast(term(), #s{}) -> {noreply, #s{}}.
handle_cast({report_to, Pid}, S) ->
    {noreply, tell_reporter(S#s{reporter = Pid, told = undefined})};
handle_cast(_, S) ->
    {noreply, S}.

%% @private
-spec handle_info(term(), #s{}) -> {noreply, #s{}} | {noreply, #s{}, hibernate}.
handle_info(Msg, S) ->
    case info(Msg, S) of
        {noreply, S1} -> {noreply, tell_reporter(S1)};
        {noreply, S1, hibernate} -> {noreply, tell_reporter(S1), hibernate}
    end.

info({cluster_topology_read, Kind, {retry, Cause, Delay}}, S) ->
    {noreply, count_retry(Kind, Cause, Delay, S)};
info({cluster_topology_read, topology, {object, _, _, _} = Event}, S) ->
    %% A status event and a round's results are the large messages (a term per peer); after them
    %% the heap is shrunk to what is kept, instead of staying as large as the largest message.
    {noreply, topology_event(Event, S), hibernate};
info({cluster_topology_read, topology, Event}, S) ->
    {noreply, topology_event(Event, S)};
info({cluster_topology_read, lease, Event}, S) ->
    {noreply, lease_event(Event, S)};
info({'DOWN', Ref, process, _, Result}, #s{running = {Ref, _, _, _, _}} = S) ->
    {noreply, round_done(Result, S), hibernate};
info(retry, S) ->
    {noreply, submit(S#s{retry_timer = undefined})};
info(liveness_check, S) ->
    {noreply, set_liveness(S#s{liveness_timer = undefined})};
info({nodedown, Node, Info}, S) ->
    {noreply, nodedown(atom_to_binary(Node, utf8), Info, S)};
info({nodeup, Node, _}, S) ->
    {noreply, departed_back(atom_to_binary(Node, utf8), S)};
info(_, S) ->
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
%% What the readers tell

topology_event({object, Meaning, At, Took} = Event, S) ->
    case cluster_topology_status:act(Meaning, S#s.liveness) of
        {act, Cur} ->
            S1 = clear_trouble([object_gone, malformed, no_status, status_stale], S#s{held = undefined}),
            %% The round starts first: logs, telemetry and the hook never delay a connect.
            S2 = submit(S1#s{status = Cur, status_at = At, unknown = undefined, pending = {desired(Cur, S1), At}}),
            #{peers := Peers, invalid := Invalid} = Cur,
            [logger:warning("cluster_topology: peer ~s is not a valid node name (~s); it is skipped",
                [N, P], #{peer => N}) || #{node := N, problem := P} <- Invalid],
            S3 = emit([status], fun() ->
                {#{listed => length(Peers), connected => count_connected(Peers), invalid => length(Invalid),
                   decode_time => Took},
                 #{resource_version => maps:get(resource_version, Cur)}}
            end, S2),
            S4 = notify(#{event => status, peers => cluster_topology_status:node_names(Peers), invalid => Invalid}, S3),
            check_self(S4);
        {keep, status_stale, Why} ->
            set_trouble(status_stale, Why, S#s{held = Event});
        {keep, no_status, Why} ->
            set_trouble(no_status, Why, S#s{unknown = Why, held = undefined});
        {keep, malformed, Why} ->
            set_trouble(malformed, Why, S#s{held = undefined})
    end;
topology_event(gone, S) ->
    set_trouble(object_gone, <<"the ClusterTopology object does not exist">>, S);
topology_event(reachable, S) ->
    clear_trouble([api_unreachable, unauthorized, forbidden, api_error], S);
topology_event({trouble, Cause, Detail}, S) ->
    set_trouble(Cause, Detail, S).

lease_event({object, Obj, _, _}, S) -> set_liveness(S#s{lease = Obj});
lease_event(gone, S) -> set_liveness(S#s{lease = missing});
lease_event(reachable, S) -> S;
lease_event({trouble, _Cause, Detail}, #s{lease = L} = S) when is_map(L) ->
    %% The last Lease read still tells when it expires; note the trouble in its reason.
    S1 = set_liveness(S),
    S1#s{liveness = (S1#s.liveness)#{read_trouble => Detail}};
lease_event({trouble, _Cause, Detail}, S) ->
    set_liveness(S#s{lease = {unreadable, Detail}}).

%% How often each reader tried again, and why: for a person asking state() why nothing arrives.
count_retry(Kind, Cause, Delay, #s{reads = R} = S) ->
    K = maps:get(Kind, R, #{retries => #{}}),
    Retries = maps:get(retries, K),
    S#s{reads = R#{Kind => K#{retries => Retries#{Cause => maps:get(Cause, Retries, 0) + 1},
        last_retry => #{cause => Cause, delay_ms => Delay, at => os:system_time(millisecond)}}}}.

%% The names to dial: the list's, but this pod's own entry (never dialled, whatever its name).
desired(#{peers := Peers}, #s{conf = C}) -> cluster_topology_status:node_names(Peers, maps:get(pod_name, C)).

count_connected(Peers) ->
    Connected = maps:from_list([{atom_to_binary(N, utf8), true} || N <- nodes([visible, hidden])]),
    length([N || #{node := N} <- Peers, is_map_key(N, Connected)]).

set_trouble(Cause, Detail, #s{trouble = T} = S) ->
    case T of
        #{cause := Cause, detail := Detail} ->
            S;
        _ ->
            logger:warning("cluster_topology: keeping the current connections: ~s (~s)", [Cause, Detail],
                #{trouble => Cause}),
            Tr = #{cause => Cause, detail => Detail, since => os:system_time(millisecond)},
            %% A trouble of another cause ends the one before (its telemetry span).
            S1 =
                case T of
                    #{cause := Cause} -> S;
                    _ -> trouble_began(Cause, Detail, trouble_ended(S))
                end,
            notify(#{event => trouble, cause => Cause, detail => Detail}, S1#s{trouble = Tr})
    end.

clear_trouble(Causes, #s{trouble = #{cause := C}} = S) ->
    case lists:member(C, Causes) of
        true ->
            logger:notice("cluster_topology: trouble ~s is over", [C], #{trouble => C}),
            notify(#{event => trouble_cleared, cause => C}, (trouble_ended(S))#s{trouble = undefined});
        false ->
            S
    end;
clear_trouble(_, S) ->
    S.

trouble_began(Cause, Detail, S) ->
    S1 = emit([trouble, start], fun() -> {#{system_time => erlang:system_time()}, #{cause => Cause, detail => Detail}} end, S),
    S1#s{trouble_began = erlang:monotonic_time()}.

trouble_ended(#s{trouble = #{cause := C}, trouble_began = Began} = S) when is_integer(Began) ->
    S1 = emit([trouble, stop], fun() -> {#{duration => erlang:monotonic_time() - Began}, #{cause => C}} end, S),
    S1#s{trouble_began = undefined};
trouble_ended(S) ->
    S.

check_self(#s{status = #{peers := Peers}, conf = C} = S) ->
    R = cluster_topology_status:self_check(Peers, maps:get(pod_name, C), node()),
    case R of
        #{ok := false, problem := P} ->
            logger:error("cluster_topology: self check failed: ~s", [P], #{self_check => failed});
        _ ->
            ok
    end,
    S1 = emit([self_check], fun() -> {#{}, #{result => maps:get(ok, R), problem => maps:get(problem, R, undefined)}} end, S),
    S2 =
        case R =/= S#s.self_check of
            true -> notify(#{event => self_check, result => R}, S1);
            false -> S1
        end,
    S2#s{self_check = R}.

set_liveness(#s{lease = L, liveness = Old} = S) ->
    Now = os:system_time(millisecond),
    New =
        case L of
            undefined -> Old;
            _ -> cluster_topology_status:liveness(L, Now)
        end,
    #{value := Value, reason := Reason} = New,
    S1 =
        case Value =/= maps:get(value, Old) of
            true ->
                logger:notice("cluster_topology: operator liveness ~s: ~s", [Value, Reason], #{liveness => Value}),
                notify(#{event => liveness, value => Value, reason => Reason},
                    emit([liveness], fun() -> {#{}, #{value => Value, previous => maps:get(value, Old), reason => Reason}} end, S));
            false ->
                S
        end,
    _ = S1#s.liveness_timer =/= undefined andalso erlang:cancel_timer(S1#s.liveness_timer),
    Timer =
        case New of
            #{value := live, expires_at_ms := E} -> erlang:send_after(max(0, E - Now) + 1, self(), liveness_check);
            _ -> undefined
        end,
    stale_changed(maps:get(value, Old), Value, S1#s{liveness = New, liveness_timer = Timer}).

%% A stale Lease means the status is not current: the client keeps what it has and says so; once
%% the Lease is live (or unknown) again, a status that arrived meanwhile is acted on.
stale_changed(Was, stale, #s{status = #{} = Cur, liveness = L} = S) when Was =/= stale ->
    {keep, status_stale, Why} = cluster_topology_status:act({current, Cur}, L),
    set_trouble(status_stale, Why, S);
stale_changed(stale, Now, S) when Now =/= stale ->
    S1 = clear_trouble([status_stale], S),
    case S1#s.held of
        undefined -> S1;
        Event -> topology_event(Event, S1#s{held = undefined})
    end;
stale_changed(_, _, S) ->
    S.

nodedown(Node, Info, #s{status = #{peers := _} = Cur} = S) ->
    case lists:member(Node, desired(Cur, S)) of
        true ->
            logger:notice("cluster_topology: connection to peer ~s lost (~0p); connecting again", [Node, Info], #{peer => Node}),
            S1 = notify(#{event => nodedown, node => Node, info => Info},
                S#s{link_reasons = (S#s.link_reasons)#{Node => <<"NodeDown">>}}),
            schedule_retry(maps:get(reconnect_delay_ms, S1#s.conf), S1#s{nodedowns = S1#s.nodedowns + 1});
        false ->
            S
    end;
nodedown(_, _, S) ->
    S.

%% A node disconnected for leaving the list is connected again while still unlisted and watched:
%% it is disconnected again (the nodedowns that may follow are handled as any other).
departed_back(Node, #s{status = #{peers := _} = Cur, departed = D} = S) ->
    Now = erlang:monotonic_time(millisecond),
    case cluster_topology_round:again(Node, D, desired(Cur, S), Now) of
        true ->
            _ = erlang:disconnect_node(binary_to_atom(Node, utf8)),
            logger:notice("cluster_topology: ~s, no longer listed, was connected again (OTP's global connects "
                "the nodes its peers hold); disconnected again", [Node], #{peer => Node}),
            S#s{departed = cluster_topology_round:departed(D, [], [Node], Now)};
        false ->
            S
    end;
departed_back(_, S) ->
    S.

%% ---------------------------------------------------------------------------------------------
%% Rounds: never two at once; while one runs only the newest list waits.

submit(#s{running = undefined, pending = undefined, status = Cur} = S) when is_map(Cur) ->
    start_round(desired(Cur, S), undefined, S);
submit(#s{running = undefined, pending = {Desired, At}} = S) ->
    start_round(Desired, At, S#s{pending = undefined});
submit(#s{running = undefined} = S) ->
    S;
submit(#s{pending = undefined, status = Cur} = S) when is_map(Cur) ->
    S#s{pending = {desired(Cur, S), undefined}};
submit(S) ->
    S.

start_round(Desired, SeenAt, #s{remembered = Rem, self = Self, conf = C, previous = Prev} = S) ->
    Plan = cluster_topology_round:plan(Rem, Desired, Self, Prev),
    Opts = #{concurrency => maps:get(connect_concurrency, C), report => call_reporter(S)},
    {_, Ref} = spawn_monitor(fun() -> exit({round, cluster_topology_round:execute(Plan, Opts)}) end),
    S#s{running = {Ref, SeenAt, Plan, os:system_time(millisecond), erlang:monotonic_time()}, previous = Desired}.

%% Each connect_node and disconnect_node call as a telemetry event (made in the round's processes).
call_reporter(#s{telemetry = false}) ->
    undefined;
call_reporter(#s{topology = T}) ->
    fun(What, Node, Result, Took) ->
        Meta =
            case Result of
                ok -> #{topology => T, node => Node, result => ok};
                {error, Why} -> #{topology => T, node => Node, result => error, reason => Why}
            end,
        _ = cluster_topology_telemetry:execute(true, [cluster_topology, What], #{duration => Took}, Meta),
        ok
    end.

round_done(Result, #s{running = {_, SeenAt, Plan, StartedAt, Began}} = S) ->
    S1 = S#s{running = undefined},
    S2 =
        case Result of
            {round, #{results := Results, called := Called0, first_connect_at := First}} ->
                %% The names in the round's answer are copies; the plan's are the ones this
                %% process already holds (in the status): keep those, not a second copy of each.
                Called = shared_names(Called0, maps:get(connect, Plan)),
                Out = cluster_topology_round:complete(Plan, Results),
                log_round(Out, Called),
                Report = Out#{called => Called, status_seen_at => SeenAt, started_at => StartedAt,
                    first_connect_at => First, finished_at => os:system_time(millisecond)},
                #{connected := Conn, failed_connects := F, disconnected := D} = Out,
                Acted = Called =/= [] orelse D =/= [],
                S2a =
                    case Acted of
                        true ->
                            notify(Report#{event => round}, emit([round], fun() ->
                                {#{duration => erlang:monotonic_time() - Began, called => length(Called),
                                   connected => length(Conn), failed => length(F), disconnected => length(D)}, #{}}
                            end, S1));
                        false ->
                            S1
                    end,
                Departed = cluster_topology_round:departed(S2a#s.departed, [S#s.self | maps:get(connect, Plan)],
                    D, erlang:monotonic_time(millisecond)),
                S3a = S2a#s{remembered = maps:get(remembered, Out), last_round = Report,
                    link_reasons = link_reasons(Out, S2a#s.link_reasons), departed = Departed},
                %% One connected again before this round ended (its nodeup came first).
                Back = [N || N <- D, lists:member(binary_to_atom(N, utf8), nodes([visible, hidden]))],
                S3 = lists:foldl(fun departed_back/2, S3a, Back),
                case maps:get(failed_connects, Out) =/= [] orelse maps:get(failed_disconnects, Out) =/= [] of
                    true -> schedule_retry(maps:get(retry_ms, S#s.conf), S3);
                    false -> S3
                end;
            Other ->
                logger:error("cluster_topology: a round crashed: ~0p", [Other]),
                schedule_retry(maps:get(retry_ms, S#s.conf), S1)
        end,
    submit_pending(S2).

shared_names([], _) -> [];
shared_names(Copies, Own) ->
    Set = maps:from_list([{N, true} || N <- Copies]),
    [N || N <- Own, is_map_key(N, Set)].

submit_pending(#s{pending = undefined} = S) -> S;
submit_pending(S) -> submit(S).

%% One timer: a sooner retry (a dropped connection) replaces a later one (a failed connect).
schedule_retry(Ms, #s{retry_timer = T} = S) when T =/= undefined ->
    case erlang:read_timer(T) of
        Left when is_integer(Left), Left =< Ms ->
            S;
        _ ->
            _ = erlang:cancel_timer(T),
            S#s{retry_timer = erlang:send_after(Ms, self(), retry)}
    end;
schedule_retry(Ms, S) ->
    S#s{retry_timer = erlang:send_after(Ms, self(), retry)}.

log_round(#{connected := _, failed_connects := F, disconnected := D, failed_disconnects := FD}, Called) ->
    Called =/= [] andalso
        logger:info("cluster_topology: connect_node called for ~b peer(s), ~b failed", [length(Called), length(F)]),
    [logger:info("cluster_topology: disconnected ~s: no longer listed", [N], #{peer => N}) || N <- D],
    failed_report("connect", F),
    failed_report("disconnect", FD),
    ok.

%% A few failures are told one by one; many (a list naming hosts that are gone) in one report,
%% so that a round does not flood the logger (whose overload protection would then make this
%% process wait for the handler, delaying the next round).
-define(FAILURES_TOLD, 5).
failed_report(_, []) ->
    ok;
failed_report(What, F) when length(F) =< ?FAILURES_TOLD ->
    [logger:warning("cluster_topology: could not ~s ~s (~0p); retrying", [What, N, Why], #{peer => N}) || {N, Why} <- F],
    ok;
failed_report(What, F) ->
    {First, _} = lists:split(?FAILURES_TOLD, F),
    logger:warning("cluster_topology: could not ~s ~b peers (~s, ...); retrying; state() lists them all",
        [What, length(F), lists:join(", ", [[N, " (", io_lib:format("~0p", [Why]), ")"] || {N, Why} <- First])],
        #{failed => length(F)}).

%% The last failure per peer, for the member report: a connect that failed after the whole setup
%% time is `Timeout', any other failed connect `Refused' (cluster_topology_round:connect/1), a
%% connect that succeeded clears it; a dropped connection is `NodeDown' (nodedown/3). The same
%% words as the sidecar's (operator/agent/member-view.ts linkReason).
link_reasons(#{connected := Connected, failed_connects := Failed}, Reasons) ->
    maps:merge(maps:without(Connected, Reasons), maps:from_list([{N, link_reason(Why)} || {N, Why} <- Failed])).

link_reason({error, timeout}) -> <<"Timeout">>;
link_reason(_) -> <<"Refused">>.

%% ---------------------------------------------------------------------------------------------
%% The member report's writer: told what it needs whenever that changes.

tell_reporter(#s{reporter = undefined} = S) ->
    S;
tell_reporter(#s{reporter = Pid, told = Told} = S) ->
    case facts(S) of
        Told ->
            S;
        Facts ->
            Pid ! {cluster_topology_facts, Facts},
            S#s{told = Facts}
    end.

facts(#s{status = Cur, conf = C, trouble = T} = S) ->
    Trouble =
        case T of
            undefined -> undefined;
            #{cause := Cause, detail := Detail, since := Since} -> cluster_topology_member:trouble(Cause, Detail, Since)
        end,
    case Cur of
        undefined ->
            #{peers => undefined, uid => undefined, resource_version => undefined, reasons => #{}, invalid => [],
              trouble => Trouble};
        #{peers := Peers, invalid := Invalid, resource_version := RV} ->
            Pod = maps:get(pod_name, C),
            Uids = [U || #{pod := P, uid := U} <- Peers ++ Invalid, P =/= undefined, P =:= Pod],
            #{peers => [maps:with([node, pod], P) || P <- Peers ++ Invalid],
              uid => case Uids of [U | _] -> U; [] -> undefined end,
              resource_version => RV,
              reasons => maps:with(desired(Cur, S), S#s.link_reasons),
              invalid => [N || #{node := N} <- Invalid],
              trouble => Trouble}
    end.

%% ---------------------------------------------------------------------------------------------
%% State, hook and telemetry

report(#s{status = Cur, conf = C} = S) ->
    Peers = case Cur of undefined -> []; _ -> maps:get(peers, Cur) end,
    Connected = maps:from_list([{atom_to_binary(N, utf8), true} || N <- nodes([visible, hidden])]),
    #{
        topology => #{namespace => maps:get(namespace, C), name => maps:get(name, C)},
        self => S#s.self,
        pod => maps:get(pod_name, C),
        peers => [P#{connected => maps:is_key(N, Connected)} || #{node := N} = P <- Peers],
        remembered => S#s.remembered,
        status => case Cur of
            undefined -> #{seen => false, unknown_reason => S#s.unknown};
            _ -> #{seen => true, last_response => maps:get(last_response, Cur),
                   observed_generation => maps:get(observed_generation, Cur),
                   resource_version => maps:get(resource_version, Cur),
                   invalid => maps:get(invalid, Cur), received_at => S#s.status_at,
                   unknown_reason => S#s.unknown}
        end,
        trouble => S#s.trouble,
        liveness => S#s.liveness,
        self_check => S#s.self_check,
        last_round => S#s.last_round,
        round_running => S#s.running =/= undefined,
        nodedowns => S#s.nodedowns,
        reads => S#s.reads,
        hook => if
            S#s.hook =/= undefined -> attached;
            S#s.hook_detached -> detached;
            true -> none
        end,
        telemetry => S#s.telemetry
    }.

%% The hook gets the event in this process. One that crashes is detached (as telemetry does
%% with a failing handler): one warning, and no more events for it.
notify(_, #s{hook = undefined} = S) ->
    S;
notify(Event, #s{hook = Hook} = S) ->
    try
        case Hook of
            F when is_function(F, 1) -> F(Event);
            {M, F} -> M:F(Event);
            P -> P ! {cluster_topology, Event}
        end
    of
        _ -> S
    catch
        K:R ->
            logger:warning("cluster_topology: the hook crashed on a ~s event (~p:~0p); it is detached and gets no more events",
                [maps:get(event, Event), K, R]),
            S#s{hook = undefined, hook_detached = true}
    end.

%% A telemetry event [cluster_topology | Name]; `Make()' gives its measurements and metadata
%% (computed only when telemetry is there). If telemetry:execute/3 itself fails (telemetry's
%% application not started), one warning, and no more events.
emit(_, _, #s{telemetry = false} = S) ->
    S;
emit(Name, Make, #s{topology = T} = S) ->
    {Measurements, Metadata} = Make(),
    case cluster_topology_telemetry:execute(true, [cluster_topology | Name], Measurements, Metadata#{topology => T}) of
        ok ->
            S;
        {error, Why} ->
            logger:warning("cluster_topology: telemetry:execute/3 failed (~0p); no more telemetry events", [Why]),
            S#s{telemetry = false}
    end.
