%% @doc Cluster membership from a ClusterTopology, inside the VM: add
%% `cluster_topology:child_spec(Opts)' to a supervisor (Elixir: `{:cluster_topology, opts}').
%%
%% The client reads its one ClusterTopology (GET + WATCH), connects every listed peer with
%% `net_kernel:connect_node/1' and disconnects the peers it connected that are no longer listed.
%% It never disconnects because of its own trouble (API unreachable, 401/403, object deleted,
%% operator silent): it keeps its connections and reports the trouble through `state/0,1',
%% `logger' and the hook. See README.md for the options.
-module(cluster_topology).
-behaviour(gen_server).

-export([start_link/1, child_spec/1, state/0, state/1, stop/0, stop/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).

-record(s, {
    conf :: map(),
    self :: binary(),
    readers = #{} :: #{atom() => pid()},
    status :: undefined | map(),
    status_at :: undefined | integer(),
    unknown :: undefined | binary(),
    trouble :: undefined | map(),
    lease :: undefined | missing | {unreadable, binary()} | map(),
    liveness :: map(),
    liveness_timer :: undefined | reference(),
    remembered = [] :: [binary()],
    %% The list the last round was for: a node not in it is new, and is connected first.
    previous = [] :: [binary()],
    running :: undefined | {reference(), integer(), map()},
    pending :: undefined | {[binary()], integer()},
    last_round :: undefined | map(),
    retry_timer :: undefined | reference(),
    self_check :: map(),
    nodedowns = 0 :: non_neg_integer()
}).

%% ---------------------------------------------------------------------------------------------
%% API

%% @doc Starts the client, registered as `cluster_topology' unless `register' says otherwise.
-spec start_link(map() | list()) -> {ok, pid()} | {error, term()}.
start_link(Opts) ->
    case cluster_topology_config:parse(Opts) of
        {ok, Conf} ->
            case maps:get(register, Conf) of
                false -> gen_server:start_link(?MODULE, Conf, []);
                Name -> gen_server:start_link({local, Name}, ?MODULE, Conf, [])
            end;
        {error, Msg} ->
            logger:error("cluster_topology: ~s", [Msg]),
            {error, {bad_options, Msg}}
    end.

%% @doc A child specification for a supervisor (Erlang or Elixir).
-spec child_spec(map() | list()) -> supervisor:child_spec().
child_spec(Opts) ->
    Id =
        case Opts of
            #{register := R} -> R;
            L when is_list(L) -> proplists:get_value(register, L, ?MODULE);
            _ -> ?MODULE
        end,
    #{id => {?MODULE, Id}, start => {?MODULE, start_link, [Opts]}, restart => permanent,
      shutdown => 5000, type => worker, modules => [?MODULE]}.

%% @doc What the client knows and did: see README.md, "State".
-spec state() -> map().
state() -> state(?MODULE).
state(Server) -> gen_server:call(Server, state).

stop() -> stop(?MODULE).
stop(Server) -> gen_server:stop(Server).

%% ---------------------------------------------------------------------------------------------
%% gen_server

init(#{namespace := NS, name := Name} = Conf) ->
    process_flag(trap_exit, true),
    logger:set_process_metadata(#{topology => <<NS/binary, "/", Name/binary>>}),
    ok = net_kernel:monitor_nodes(true, [nodedown_reason]),
    Self = atom_to_binary(node(), utf8),
    Readers0 = #{topology => start_reader(topology, Conf)},
    Readers =
        case maps:get(lease, Conf) of
            true -> Readers0#{lease => start_reader(lease, Conf)};
            false -> Readers0
        end,
    S = #s{
        conf = Conf,
        self = Self,
        readers = Readers,
        liveness = #{value => unknown, reason => <<"the operator's Lease has not been read yet">>},
        self_check = #{ok => unknown, problem => <<"no status read yet">>}
    },
    node() =:= nonode@nohost andalso
        logger:error("cluster_topology: the local node is not distributed (start it with -name or -sname); it cannot connect to peers"),
    {ok, S}.

handle_call(state, _From, S) ->
    {reply, report(S), S, hibernate};
handle_call(_, _From, S) ->
    {reply, {error, unknown_call}, S}.

handle_cast(_, S) ->
    {noreply, S}.

handle_info({cluster_topology_read, topology, Event}, S) ->
    %% A status event and a round's results are the large messages (a term per peer); after them
    %% the heap is shrunk to what is kept, instead of staying as large as the largest message.
    {noreply, topology_event(Event, S), hibernate};
handle_info({cluster_topology_read, lease, Event}, S) ->
    {noreply, lease_event(Event, S)};
handle_info({'DOWN', Ref, process, _, Result}, #s{running = {Ref, _, _}} = S) ->
    {noreply, round_done(Result, S), hibernate};
handle_info(retry, S) ->
    {noreply, submit(S#s{retry_timer = undefined})};
handle_info(liveness_check, S) ->
    {noreply, set_liveness(S#s{liveness_timer = undefined})};
handle_info({nodedown, Node, Info}, S) ->
    {noreply, nodedown(atom_to_binary(Node, utf8), Info, S)};
handle_info({nodeup, _, _}, S) ->
    {noreply, S};
handle_info({'EXIT', Pid, Why}, #s{readers = R} = S) ->
    case [K || {K, P} <- maps:to_list(R), P =:= Pid] of
        [Kind] ->
            %% A reader never ends by itself; if it crashed, start it again (its trouble was reported).
            logger:error("cluster_topology: the ~p reader stopped (~0p); starting it again", [Kind, Why]),
            {noreply, S#s{readers = R#{Kind => start_reader(Kind, S#s.conf)}}};
        [] when Why =:= normal ->
            {noreply, S};
        [] ->
            {stop, Why, S}
    end;
handle_info(_, S) ->
    {noreply, S}.

terminate(_, #s{readers = R}) ->
    [begin unlink(P), exit(P, shutdown) end || P <- maps:values(R)],
    ok.

%% ---------------------------------------------------------------------------------------------
%% What the readers tell

topology_event({object, Meaning, At}, S) ->
    case Meaning of
        {current, Cur} ->
            S1 = clear_trouble([object_gone, malformed, no_status], S),
            %% The round starts first: logs and the hook never delay a connect.
            S2 = submit(S1#s{status = Cur, status_at = At, unknown = undefined, pending = {desired(Cur), At}}),
            [logger:warning("cluster_topology: peer ~s is not a valid node name (~s); it is skipped",
                [N, P], #{peer => N}) || #{node := N, problem := P} <- maps:get(invalid, Cur)],
            notify(#{event => status, peers => cluster_topology_status:node_names(maps:get(peers, Cur)),
                invalid => maps:get(invalid, Cur)}, S2),
            check_self(S2);
        {unknown, Why} ->
            set_trouble(no_status, Why, S#s{unknown = Why});
        {error, Why} ->
            set_trouble(malformed, <<"the ClusterTopology answer was refused (keeping the last good list): ", Why/binary>>, S)
    end;
topology_event(gone, S) ->
    set_trouble(object_gone, <<"the ClusterTopology object does not exist">>, S);
topology_event(reachable, S) ->
    clear_trouble([api_unreachable, unauthorized, forbidden, api_error], S);
topology_event({trouble, Cause, Detail}, S) ->
    set_trouble(Cause, Detail, S).

lease_event({object, Obj, _}, S) -> set_liveness(S#s{lease = Obj});
lease_event(gone, S) -> set_liveness(S#s{lease = missing});
lease_event(reachable, S) -> S;
lease_event({trouble, _Cause, Detail}, #s{lease = L} = S) when is_map(L) ->
    %% The last Lease read still tells when it expires; note the trouble in its reason.
    S1 = set_liveness(S),
    S1#s{liveness = (S1#s.liveness)#{read_trouble => Detail}};
lease_event({trouble, _Cause, Detail}, S) ->
    set_liveness(S#s{lease = {unreadable, Detail}}).

desired(#{peers := Peers}) -> cluster_topology_status:node_names(Peers).

%% The topology reader hands over what the status means (the decoded object stays in the
%% reader); the Lease reader hands over the Lease's spec.
start_reader(topology, #{max_peers := Max} = Conf) ->
    cluster_topology_reader:start_link(self(), topology, Conf,
        fun(Obj) -> cluster_topology_status:interpret(Obj, Max) end);
start_reader(lease, Conf) ->
    cluster_topology_reader:start_link(self(), lease, Conf, fun(Obj) -> maps:with([<<"spec">>], Obj) end).

set_trouble(Cause, Detail, #s{trouble = T} = S) ->
    case T of
        #{cause := Cause, detail := Detail} ->
            S;
        _ ->
            logger:warning("cluster_topology: keeping the current connections: ~s (~s)", [Cause, Detail],
                #{trouble => Cause}),
            Tr = #{cause => Cause, detail => Detail, since => os:system_time(millisecond)},
            notify(#{event => trouble, cause => Cause, detail => Detail}, S),
            S#s{trouble = Tr}
    end.

clear_trouble(Causes, #s{trouble = #{cause := C}} = S) ->
    case lists:member(C, Causes) of
        true ->
            logger:notice("cluster_topology: trouble ~s is over", [C], #{trouble => C}),
            notify(#{event => trouble_cleared, cause => C}, S),
            S#s{trouble = undefined};
        false ->
            S
    end;
clear_trouble(_, S) ->
    S.

check_self(#s{status = #{peers := Peers}, conf = C} = S) ->
    R = cluster_topology_status:self_check(Peers, maps:get(pod_name, C), node()),
    case R of
        #{ok := false, problem := P} ->
            logger:error("cluster_topology: self check failed: ~s", [P], #{self_check => failed});
        _ ->
            ok
    end,
    R =/= S#s.self_check andalso notify(#{event => self_check, result => R}, S),
    S#s{self_check = R}.

set_liveness(#s{lease = L, liveness = Old} = S) ->
    Now = os:system_time(millisecond),
    New =
        case L of
            undefined -> Old;
            _ -> cluster_topology_status:liveness(L, Now)
        end,
    maps:get(value, New) =/= maps:get(value, Old) andalso
        begin
            logger:notice("cluster_topology: operator liveness ~s: ~s", [maps:get(value, New), maps:get(reason, New)],
                #{liveness => maps:get(value, New)}),
            notify(#{event => liveness, value => maps:get(value, New), reason => maps:get(reason, New)}, S)
        end,
    S#s.liveness_timer =/= undefined andalso erlang:cancel_timer(S#s.liveness_timer),
    Timer =
        case New of
            #{value := live, expires_at_ms := E} -> erlang:send_after(max(0, E - Now) + 1, self(), liveness_check);
            _ -> undefined
        end,
    S#s{liveness = New, liveness_timer = Timer}.

nodedown(Node, Info, #s{status = #{peers := _} = Cur} = S) ->
    case lists:member(Node, desired(Cur)) of
        true ->
            logger:notice("cluster_topology: connection to peer ~s lost (~0p); connecting again", [Node, Info], #{peer => Node}),
            notify(#{event => nodedown, node => Node, info => Info}, S),
            schedule_retry(maps:get(reconnect_delay_ms, S#s.conf), S#s{nodedowns = S#s.nodedowns + 1});
        false ->
            S
    end;
nodedown(_, _, S) ->
    S.

%% ---------------------------------------------------------------------------------------------
%% Rounds: never two at once; while one runs only the newest list waits.

submit(#s{running = undefined, pending = undefined, status = Cur} = S) when is_map(Cur) ->
    start_round(desired(Cur), undefined, S);
submit(#s{running = undefined, pending = {Desired, At}} = S) ->
    start_round(Desired, At, S#s{pending = undefined});
submit(#s{running = undefined} = S) ->
    S;
submit(#s{pending = undefined, status = Cur} = S) when is_map(Cur) ->
    S#s{pending = {desired(Cur), undefined}};
submit(S) ->
    S.

start_round(Desired, SeenAt, #s{remembered = Rem, self = Self, conf = C, previous = Prev} = S) ->
    Plan = cluster_topology_round:plan(Rem, Desired, Self, Prev),
    Opts = #{concurrency => maps:get(connect_concurrency, C)},
    {_, Ref} = spawn_monitor(fun() -> exit({round, cluster_topology_round:execute(Plan, Opts)}) end),
    S#s{running = {Ref, SeenAt, Plan}, previous = Desired}.

round_done(Result, #s{running = {_, SeenAt, Plan}} = S) ->
    S1 = S#s{running = undefined},
    S2 =
        case Result of
            {round, #{results := Results, called := Called0, first_connect_at := First}} ->
                %% The names in the round's answer are copies; the plan's are the ones this
                %% process already holds (in the status): keep those, not a second copy of each.
                Called = shared_names(Called0, maps:get(connect, Plan)),
                Out = cluster_topology_round:complete(Plan, Results),
                log_round(Out, Called),
                Report = Out#{called => Called, status_seen_at => SeenAt, first_connect_at => First,
                    finished_at => os:system_time(millisecond)},
                (Called =/= [] orelse maps:get(disconnected, Out) =/= []) andalso
                    notify(Report#{event => round}, S1),
                S3 = S1#s{remembered = maps:get(remembered, Out), last_round = Report},
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
            erlang:cancel_timer(T),
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

%% ---------------------------------------------------------------------------------------------
%% State and hook

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
        nodedowns => S#s.nodedowns
    }.

notify(Event, #s{conf = #{hook := Hook}}) when Hook =/= undefined ->
    try
        case Hook of
            F when is_function(F, 1) -> F(Event);
            {M, F} -> M:F(Event);
            P -> P ! {cluster_topology, Event}
        end
    catch
        K:R -> logger:warning("cluster_topology: the hook failed: ~p:~0p", [K, R])
    end,
    ok;
notify(_, _) ->
    ok.
