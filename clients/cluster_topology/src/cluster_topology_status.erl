%% @doc What a ClusterTopology object and its Lease mean to a reader (status protocol v1), as
%% pure functions:
%%
%% - a status with `lastResponse' and a `peers' array is CURRENT: its peer list is the truth,
%%   even when empty;
%% - a status without either is UNKNOWN: the reader keeps what it has;
%% - an answer that is not shaped like a ClusterTopology (wrong types, too many peers) is an
%%   ERROR: the reader keeps its last good list and reports it;
%% - the operator is live iff its Lease exists and now =&lt; renewTime + leaseDurationSeconds;
%%   a missing or unreadable Lease is liveness UNKNOWN (reported, never acted on);
%% - the reader acts on a current list unless the operator is stale (then the status is not
%%   current: it keeps what it has), and never dials its own pod's entry.
%%
%% The cases both readers run are the repository's test/protocol-vectors/.
-module(cluster_topology_status).

-define(FLAGS, [<<"terminating">>, <<"ready">>, <<"serving">>]).

-export([interpret/2, liveness/2, act/2, self_check/3, node_names/1, node_names/2]).

-type peer() :: #{
    node := binary(),
    pod := binary() | undefined,
    uid := binary() | undefined,
    ready := boolean() | unknown,
    serving := boolean() | unknown,
    terminating := boolean() | unknown
}.
-type current() :: #{
    peers := [peer()],
    invalid := [#{node := binary(), pod := binary() | undefined, uid := binary() | undefined, problem := binary()}],
    last_response := map(),
    observed_generation := integer() | undefined,
    resource_version := binary() | undefined
}.
-export_type([peer/0, current/0]).

%% @doc Interprets a decoded ClusterTopology object. `MaxPeers' caps the list accepted.
-spec interpret(term(), pos_integer()) ->
    {current, current()} | {unknown, binary()} | {error, binary()}.
interpret(Obj, MaxPeers) when is_map(Obj) ->
    RV = resource_version(Obj),
    case maps:get(<<"status">>, Obj, undefined) of
        undefined ->
            {unknown, <<"the ClusterTopology has no status yet">>};
        Status when is_map(Status) ->
            interpret_status(Status, RV, MaxPeers);
        _ ->
            {error, <<"status is not an object">>}
    end;
interpret(_, _) ->
    {error, <<"the answer is not a JSON object">>}.

interpret_status(Status, RV, MaxPeers) ->
    LR = maps:get(<<"lastResponse">>, Status, undefined),
    Peers = maps:get(<<"peers">>, Status, undefined),
    Gen = maps:get(<<"observedGeneration">>, Status, undefined),
    Defaults = maps:get(<<"peerDefaults">>, Status, #{}),
    DefaultsProblem = defaults_problem(Defaults),
    if
        LR =/= undefined, not is_map(LR) ->
            {error, <<"status.lastResponse is not an object">>};
        Peers =/= undefined, not is_list(Peers) ->
            {error, <<"status.peers is not an array">>};
        Gen =/= undefined, not is_integer(Gen) ->
            {error, <<"status.observedGeneration is not an integer">>};
        DefaultsProblem =/= undefined ->
            {error, DefaultsProblem};
        LR =:= undefined ->
            {unknown, <<"the status has no lastResponse">>};
        Peers =:= undefined ->
            {unknown, <<"the status has no peers array">>};
        true ->
            N = length(Peers),
            case N > MaxPeers of
                true ->
                    {error,
                        iolist_to_binary(
                            io_lib:format("status.peers holds ~b entries, more than the ~b accepted", [
                                N, MaxPeers
                            ])
                        )};
                false ->
                    peers(Peers, Defaults, LR, Gen, RV)
            end
    end.

peers(Entries, Defaults, LR, Gen, RV) ->
    Flags = maps:from_list([{K, maps:get(K, Defaults, unknown)} || K <- ?FLAGS]),
    try lists:foldl(fun(E, Acc) -> peer(E, Flags, Acc) end, {[], [], #{}}, Entries) of
        {Good, Invalid, _} ->
            {current, #{
                peers => lists:reverse(Good),
                invalid => lists:reverse(Invalid),
                last_response => LR,
                observed_generation => Gen,
                resource_version => RV
            }}
    catch
        throw:{malformed, Why} -> {error, Why}
    end.

%% status.peerDefaults holds the value of each flag an entry leaves out (absent from both: unknown).
defaults_problem(D) when is_map(D) ->
    case [K || K <- ?FLAGS, not is_boolean(maps:get(K, D, false))] of
        [] -> undefined;
        [K | _] -> <<"status.peerDefaults.", K/binary, " is not a boolean">>
    end;
defaults_problem(_) ->
    <<"status.peerDefaults is not an object">>.

peer(E, Flags, {Good, Invalid, Seen}) when is_map(E) ->
    Node =
        case maps:get(<<"nodeName">>, E, undefined) of
            B when is_binary(B) -> B;
            _ -> throw({malformed, <<"a status.peers entry has no string nodeName">>})
        end,
    P = #{
        node => Node,
        pod => opt_string(<<"pod">>, E),
        uid => opt_string(<<"uid">>, E),
        ready => opt_bool(<<"ready">>, E, Flags),
        serving => opt_bool(<<"serving">>, E, Flags),
        terminating => opt_bool(<<"terminating">>, E, Flags)
    },
    case maps:is_key(Node, Seen) of
        true ->
            {Good, Invalid, Seen};
        false ->
            case cluster_topology_name:check(Node) of
                ok -> {[P | Good], Invalid, Seen#{Node => true}};
                {error, Problem} -> {Good, [#{node => Node, pod => maps:get(pod, P), uid => maps:get(uid, P), problem => Problem} | Invalid], Seen#{Node => true}}
            end
    end;
peer(_, _, _) ->
    throw({malformed, <<"a status.peers entry is not an object">>}).

opt_string(K, E) ->
    case maps:get(K, E, undefined) of
        undefined -> undefined;
        B when is_binary(B) -> B;
        _ -> throw({malformed, <<"status.peers[].", K/binary, " is not a string">>})
    end.

%% A flag an entry leaves out is status.peerDefaults' value, else unknown (never false).
opt_bool(K, E, Flags) ->
    case maps:get(K, E, undefined) of
        undefined -> maps:get(K, Flags);
        B when is_boolean(B) -> B;
        _ -> throw({malformed, <<"status.peers[].", K/binary, " is not a boolean">>})
    end.

resource_version(Obj) ->
    case maps:get(<<"metadata">>, Obj, #{}) of
        #{<<"resourceVersion">> := RV} when is_binary(RV) -> RV;
        _ -> undefined
    end.

%% @doc The node names of a list (valid, each once, in list order).
-spec node_names([peer()]) -> [binary()].
node_names(Peers) -> [N || #{node := N} <- Peers].

%% @doc The names to dial: the list's names but the entry of the reader's own pod `Pod' (it
%% never dials itself, whatever name the operator computed for it: a wrong one is the self
%% check's business).
-spec node_names([peer()], binary() | undefined) -> [binary()].
node_names(Peers, Pod) -> [N || #{node := N, pod := P} <- Peers, P =:= undefined orelse P =/= Pod].

%% @doc Whether to act on what `interpret/2' made of the object, given the operator's liveness
%% (`liveness/2'): a current list is acted on unless the operator is stale (the status is then
%% not current, docs/status-protocol.md §4); otherwise the reader keeps what it has, and the
%% cause says why.
-spec act({current, current()} | {unknown, binary()} | {error, binary()}, map()) ->
    {act, current()} | {keep, no_status | malformed | status_stale, binary()}.
act({current, _}, #{value := stale} = Liveness) ->
    {keep, status_stale, stale_reason(Liveness)};
act({current, Current}, _) ->
    {act, Current};
act({unknown, Why}, _) ->
    {keep, no_status, Why};
act({error, Why}, _) ->
    {keep, malformed, <<"the ClusterTopology answer was refused (keeping the last good list): ", Why/binary>>}.

stale_reason(#{renew_time := R, lease_duration_s := D}) ->
    iolist_to_binary(io_lib:format("the operator last renewed its liveness Lease at ~s (limit ~b s): the status is not current", [R, D]));
stale_reason(_) ->
    <<"the operator's liveness Lease is stale: the status is not current">>.

%% @doc The operator's liveness from its Lease (decoded object), `missing' or `{unreadable, Why}'.
-spec liveness(map() | missing | {unreadable, binary()}, integer()) -> map().
liveness(missing, _NowMs) ->
    #{value => unknown, reason => <<"the operator's Lease does not exist">>};
liveness({unreadable, Why}, _NowMs) ->
    #{value => unknown, reason => <<"the operator's Lease cannot be read: ", Why/binary>>};
liveness(Lease, NowMs) when is_map(Lease) ->
    Spec = maps:get(<<"spec">>, Lease, #{}),
    Renew = maps:get(<<"renewTime">>, Spec, undefined),
    Dur = maps:get(<<"leaseDurationSeconds">>, Spec, undefined),
    Holder = maps:get(<<"holderIdentity">>, Spec, undefined),
    case {parse_time(Renew), Dur} of
        {{ok, RenewMs}, D} when is_integer(D), D > 0 ->
            Expires = RenewMs + D * 1000,
            Base = #{renew_time => Renew, lease_duration_s => D, holder => Holder, expires_at_ms => Expires},
            case NowMs =< Expires of
                true -> Base#{value => live, reason => <<"the operator polled within the staleness limit">>};
                false -> Base#{value => stale, reason => <<"the operator has not polled successfully within the staleness limit">>}
            end;
        _ ->
            #{value => unknown, reason => <<"the operator's Lease has no usable renewTime/leaseDurationSeconds">>}
    end;
liveness(_, _) ->
    #{value => unknown, reason => <<"the operator's Lease is not an object">>}.

parse_time(B) when is_binary(B), byte_size(B) < 64 ->
    try calendar:rfc3339_to_system_time(binary_to_list(B), [{unit, millisecond}]) of
        Ms -> {ok, Ms}
    catch
        _:_ -> error
    end;
parse_time(_) ->
    error.

%% @doc Compares the name the operator computed for this pod with the local node's real name.
-spec self_check([peer()], binary() | undefined, node()) -> map().
self_check(_Peers, _Pod, nonode@nohost) ->
    #{ok => false, problem => <<"the local node is not distributed (started without -name/-sname)">>};
self_check(_Peers, undefined, _Self) ->
    #{ok => unknown, problem => <<"no pod name (set HOSTNAME or the pod_name option)">>};
self_check(Peers, Pod, Self) ->
    Real = atom_to_binary(Self, utf8),
    case [N || #{pod := P, node := N} <- Peers, P =:= Pod] of
        [] ->
            #{ok => unknown, pod => Pod, problem => <<"the status lists no peer for this pod, so its computed name is unknown">>};
        [Real | _] ->
            #{ok => true, pod => Pod, node => Real};
        [Computed | _] ->
            #{
                ok => false,
                pod => Pod,
                node => Real,
                computed => Computed,
                problem =>
                    iolist_to_binary([
                        <<"the operator computed the node name ">>, Computed,
                        <<" for this pod, but the local node is named ">>, Real,
                        <<": peers would try to reach a name that does not exist - make the naming "
                          "annotations and the release name (RELEASE_NODE / env.sh) agree">>
                    ])
            }
    end.
