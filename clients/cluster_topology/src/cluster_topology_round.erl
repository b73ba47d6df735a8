%% @doc One round, the way the agent does it (plan and fold are pure; `execute/2' calls the VM):
%%
%% 1. disconnect the nodes this client connected itself (remembered) that are no longer listed;
%% 2. connect every listed node except the local one; a node already connected costs nothing,
%%    unless this round disconnected someone: then OTP's `global' (prevent_overlapping_partitions)
%%    may have dropped other connections as well, so every listed node is connected again;
%% 3. a failed connect is not remembered, so the next round tries again; a failed disconnect
%%    stays remembered.
%%
%% Only remembered nodes are ever disconnected: a node the application connected itself is left
%% alone, except a departed one: a node a round disconnected because the list dropped it is
%% watched for ?DEPARTED_WATCH_MS after that, and disconnected again if it is connected again
%% while still unlisted (a node that still runs is connected back by OTP's `global' as long as
%% any peer holds it: connect_all). Connects run concurrently with a bound, so one unreachable host (net_kernel waits for
%% its setup time) does not delay the others, in this order: nodes the previous list did not name
%% (what the status change is about), then listed nodes not connected by this client (earlier
%% failures: perhaps hosts that are gone), then the ones it connected.
-module(cluster_topology_round).

-export([plan/3, plan/4, complete/2, execute/2, departed/4, again/4]).

%% How long a node disconnected for leaving the list is disconnected again if it comes back.
-define(DEPARTED_WATCH_MS, 30000).

-type plan() :: #{
    remembered := [binary()],
    disconnect := [binary()],
    connect := [binary()],
    self_listed := boolean()
}.
-export_type([plan/0, results/0, reporter/0]).

%% Per phase, each node's result.
-type results() :: #{connect := #{binary() => ok | {error, term()}}, disconnect := #{binary() => ok | {error, term()}}}.
%% Told each connect_node/disconnect_node call: what, the node, its result and how long it took
%% (native time units); it runs in the process that made the call.
-type reporter() :: fun((connect | disconnect, node(), ok | {error, term()}, integer()) -> term()).

%% @doc The plan for a list when the previous list was the same (no node is new to it).
-spec plan([binary()], [binary()], binary()) -> plan().
plan(Remembered, Desired, Self) ->
    plan(Remembered, Desired, Self, Desired).

%% @doc The plan for `Desired'; `Previous' is the list the round before was for (`connect' is in
%% the order the connects are made: see the module doc).
-spec plan([binary()], [binary()], binary(), [binary()]) -> plan().
plan(Remembered0, Desired0, Self, Previous) ->
    Remembered = unique(Remembered0),
    Desired = unique(Desired0),
    DesiredSet = set(Desired),
    RemSet = set(Remembered),
    PrevSet = set(Previous),
    Connect = [N || N <- Desired, N =/= Self],
    #{
        remembered => Remembered,
        disconnect => [N || N <- Remembered, not maps:is_key(N, DesiredSet), N =/= Self],
        connect =>
            [N || N <- Connect, not maps:is_key(N, RemSet), not maps:is_key(N, PrevSet)] ++
            [N || N <- Connect, not maps:is_key(N, RemSet), maps:is_key(N, PrevSet)] ++
            [N || N <- Connect, maps:is_key(N, RemSet)],
        self_listed => maps:is_key(Self, DesiredSet)
    }.

set(L) -> maps:from_list([{N, true} || N <- L]).

%% @doc Folds the results (`#{Node => ok | {error, Why}}' per phase) into the next remembered list.
-spec complete(plan(), results()) -> #{
    remembered := [binary()],
    connected := [binary()],
    failed_connects := [{binary(), term()}],
    disconnected := [binary()],
    failed_disconnects := [{binary(), term()}]
}.
complete(#{connect := C, disconnect := D}, #{connect := CR0, disconnect := DR0}) ->
    %% The usual reasons become the module's constants (no heap per failed peer).
    CR = maps:map(fun(_, R) -> reason(R) end, CR0),
    DR = maps:map(fun(_, R) -> reason(R) end, DR0),
    Ok = fun(R) -> fun(N) -> maps:get(N, R, {error, not_attempted}) =:= ok end end,
    Connected = lists:filter(Ok(CR), C),
    Failed = C -- Connected,
    Disconnected = lists:filter(Ok(DR), D),
    FailedDisconnects = D -- Disconnected,
    #{
        remembered => Connected ++ FailedDisconnects,
        connected => Connected,
        failed_connects => [{N, maps:get(N, CR, {error, not_attempted})} || N <- Failed],
        disconnected => Disconnected,
        failed_disconnects => [{N, maps:get(N, DR, {error, not_attempted})} || N <- FailedDisconnects]
    }.

%% @doc The departed nodes to watch after a round (each with when its watch ends, in `Now''s
%% milliseconds): those it disconnected, from `Now'; the others as they were, until their time is
%% up or `Listed' names them again.
-spec departed(#{binary() => integer()}, [binary()], [binary()], integer()) -> #{binary() => integer()}.
departed(Before, Listed, Disconnected, Now) ->
    L = set(Listed),
    Kept = maps:filter(fun(N, Until) -> Until > Now andalso not maps:is_key(N, L) end, Before),
    lists:foldl(
        fun(N, Acc) ->
            case maps:is_key(N, L) of
                true -> Acc;
                false -> Acc#{N => Now + ?DEPARTED_WATCH_MS}
            end
        end,
        Kept,
        Disconnected
    ).

%% @doc True when `Node', connected now, is a watched departed node that `Listed' does not name:
%% it is disconnected again.
-spec again(binary(), #{binary() => integer()}, [binary()], integer()) -> boolean().
again(Node, Departed, Listed, Now) ->
    case maps:find(Node, Departed) of
        {ok, Until} when Until > Now -> not lists:member(Node, Listed);
        _ -> false
    end.

reason(ok) -> ok;
reason({error, refused}) -> {error, refused};
reason({error, timeout}) -> {error, timeout};
reason({error, not_distributed}) -> {error, not_distributed};
reason(Other) -> Other.

%% @doc Carries a plan out in this VM. Options: `concurrency' (connects in flight), `report'
%% (a `reporter()', or `undefined'). Returns the results and what was called, with the time the
%% first connect_node was called.
-spec execute(plan(), #{concurrency => pos_integer(), report => reporter() | undefined}) ->
    #{results := results(), called := [binary()], first_connect_at := integer() | undefined}.
execute(#{disconnect := D, connect := C}, Opts) ->
    Limit = max(1, maps:get(concurrency, Opts, 8)),
    Report = maps:get(report, Opts, undefined),
    DR = maps:from_list([{N, call(disconnect, N, Report)} || N <- D]),
    Held =
        case D of
            [] -> maps:from_list([{atom_to_binary(N, utf8), true} || N <- nodes([visible, hidden])]);
            _ -> #{}
        end,
    ToCall = [N || N <- C, not maps:is_key(N, Held)],
    HeldResults = maps:from_list([{N, ok} || N <- C, maps:is_key(N, Held)]),
    FirstAt =
        case ToCall of
            [] -> undefined;
            _ -> os:system_time(millisecond)
        end,
    CR = connect_all(ToCall, Limit, Report),
    #{
        results => #{connect => maps:merge(HeldResults, CR), disconnect => DR},
        called => ToCall,
        first_connect_at => FirstAt
    }.

%% One distribution call (the names were checked by the node-name grammar before they got here).
call(What, N, Report) ->
    Node = binary_to_atom(N, utf8),
    T0 = erlang:monotonic_time(),
    R =
        case What of
            connect -> connect(Node);
            disconnect -> disconnect(Node)
        end,
    _ = is_function(Report) andalso Report(What, Node, R, erlang:monotonic_time() - T0),
    R.

disconnect(Node) ->
    case erlang:disconnect_node(Node) of
        true -> ok;
        false -> ok;
        ignored -> {error, not_distributed}
    end.

%% connect_node/1 says only `false' when it fails; how long it took tells why. net_kernel gives
%% each step of a connection's setup (the EPMD lookup, the TCP connect, each handshake message)
%% at most the setup time (kernel's `net_setuptime') and ends the attempt when one step takes
%% longer, so an attempt that failed only after the whole setup time is a `timeout' (nobody
%% answered: packets dropped, a port that accepts and never speaks); one that failed sooner was
%% `refused' (a different cookie, nobody listening, no such node, a name that does not resolve).
connect(Node) ->
    T0 = erlang:monotonic_time(),
    case net_kernel:connect_node(Node) of
        true -> ok;
        false -> {error, failure(erlang:monotonic_time() - T0, setup_time_ms())};
        ignored -> {error, not_distributed}
    end.

failure(Took, SetupMs) ->
    case erlang:convert_time_unit(Took, native, millisecond) >= SetupMs of
        true -> timeout;
        false -> refused
    end.

%% net_setuptime as kernel's documentation states it: seconds (a positive number), at most 120,
%% 7 when unset or not a positive number.
setup_time_ms() ->
    case application:get_env(kernel, net_setuptime) of
        {ok, T} when is_number(T), T >= 120 -> 120000;
        {ok, T} when is_number(T), T > 0 -> round(T * 1000);
        _ -> 7000
    end.

%% At most Limit connects in flight, each in a process of its own.
connect_all(Nodes, Limit, Report) ->
    connect_all(Nodes, Limit, Report, #{}, #{}).

connect_all([], _Limit, _Report, Running, Acc) when map_size(Running) =:= 0 ->
    Acc;
connect_all([N | Rest], Limit, Report, Running, Acc) when map_size(Running) < Limit ->
    {_, Ref} = spawn_monitor(fun() -> exit({connect_result, call(connect, N, Report)}) end),
    connect_all(Rest, Limit, Report, Running#{Ref => N}, Acc);
connect_all(Queue, Limit, Report, Running, Acc) ->
    receive
        {'DOWN', Ref, process, _, Why} when is_map_key(Ref, Running) ->
            {N, Running1} = maps:take(Ref, Running),
            R =
                case Why of
                    {connect_result, Res} -> Res;
                    Other -> {error, {crashed, Other}}
                end,
            connect_all(Queue, Limit, Report, Running1, Acc#{N => R})
    end.

unique(L) -> unique(L, #{}, []).
unique([], _, Acc) -> lists:reverse(Acc);
unique([X | R], Seen, Acc) ->
    case maps:is_key(X, Seen) of
        true -> unique(R, Seen, Acc);
        false -> unique(R, Seen#{X => true}, [X | Acc])
    end.
