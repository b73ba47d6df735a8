%% @doc This member's report (a ClusterTopologyMember, docs/status-protocol.md §8), as pure
%% functions: the view built from what the client knows (§8.2), the whole object sent with one
%% server-side apply (§8.3), and when to send it (§8.4: only on a change of the view, at most once
%% per 10 s, renewed every 5 minutes). The operator's TypeScript has the same rules
%% (operator/protocol/member-report.ts, report-plan.ts); the repository's tests hold the two to
%% the same answers. `cluster_topology_report' is the process that asks and writes.
%%
%% A view is a map with the report's own JSON field names (binary keys), so that it is compared
%% and encoded as it is.
-module(cluster_topology_member).

-export([view/1, same_view/2, digest/1, report/3, object_name/2, path/3, rfc3339/1, trouble/3]).
-export([plan/3, plan/4, record_attempt/4, budget/0, outcome/1]).
-export_type([input/0, view/0, history/0, plan/0, outcome/0, budget/0, identity/0]).

-define(LIST_CAP, 20).
-define(MESSAGE_MAX, 1024).

%% What the client knows when it reports. `peers': the list it acts on, every entry of
%% `status.peers' (valid or not) as `#{node, pod}', or `undefined' while it has none;
%% `connected': the node names it is connected to; `reasons': the last failure per name it is
%% not connected to (a name without one is `NotTried'); `invalid': the listed names it refuses.
-type input() :: #{
    node := binary(),
    pod := binary() | undefined,
    peers := undefined | [#{node := binary(), pod := binary() | undefined}],
    resource_version => binary() | undefined,
    connected := [binary()],
    reasons => #{binary() => binary()},
    invalid => [binary()],
    observed => boolean(),
    trouble => undefined | #{binary() => binary()}
}.
-type view() :: #{binary() => cluster_topology_json:value()}.
%% Who reports: namespace, topology, and the pod's name and uid.
-type identity() :: #{namespace := binary(), topology := binary(), pod := binary(), uid := binary()}.
-type outcome() :: ok | forbidden | failed.
%% What the writer remembers (its own clock, ms): the last view the server accepted and when it
%% was sent; the last attempt and how it ended. Empty after a start.
-type history() :: #{written => {view(), integer()}, attempt => {integer(), outcome()}}.
-type plan() :: write | {wait, integer()} | {idle, integer()}.
-type budget() :: #{min_interval_ms := pos_integer(), renew_ms := pos_integer(), retry_ms := pos_integer()}.

%% @doc The protocol's budget (§8.4).
-spec budget() -> budget().
budget() -> #{min_interval_ms => 10000, renew_ms => 300000, retry_ms => 30000}.

%% @doc The view (§8.2): counts of the listed peers other than its own pod's entry, the ones it
%% is not connected to (byte order, the first 20, with a count of the rest), the self check,
%% the digests of the list and of its connections.
-spec view(input()) -> view().
view(#{node := Node, pod := Pod, peers := Peers, connected := Connected0} = In) ->
    Own = fun(#{pod := P}) -> P =/= undefined andalso P =:= Pod end,
    SelfCheck =
        case Peers of
            undefined ->
                #{<<"result">> => <<"Unknown">>, <<"actual">> => Node};
            _ ->
                case lists:search(Own, Peers) of
                    false -> #{<<"result">> => <<"NotListed">>, <<"actual">> => Node};
                    {value, #{node := Node}} -> #{<<"result">> => <<"Match">>, <<"expected">> => Node, <<"actual">> => Node};
                    {value, #{node := E}} -> #{<<"result">> => <<"Mismatch">>, <<"expected">> => E, <<"actual">> => Node}
                end
        end,
    Others = [N || #{node := N} = P <- list(Peers), not Own(P)],
    ConnectedSet = set(Connected0),
    InvalidSet = set(maps:get(invalid, In, [])),
    Reasons = maps:get(reasons, In, #{}),
    {ConnectedNames, NotConnected} =
        lists:foldr(
            fun(N, {C, NC}) ->
                case {is_map_key(N, InvalidSet), is_map_key(N, ConnectedSet)} of
                    {true, _} -> {C, [{N, <<"Invalid">>} | NC]};
                    {false, true} -> {[N | C], NC};
                    {false, false} -> {C, [{N, maps:get(N, Reasons, <<"NotTried">>)} | NC]}
                end
            end,
            {[], []},
            Others
        ),
    Sorted = lists:keysort(1, NotConnected),
    Listed = length(Others),
    Conn = length(ConnectedNames),
    Invalid = length([N || N <- Others, is_map_key(N, InvalidSet)]),
    Digests =
        case Peers of
            undefined -> #{};
            _ -> #{<<"listedDigest">> => digest([N || #{node := N} <- Peers]),
                   <<"connectedDigest">> => digest([Node | ConnectedNames])}
        end,
    Optional = maps:from_list(
        [{<<"topologyResourceVersion">>, RV} || RV <- [maps:get(resource_version, In, undefined)], RV =/= undefined] ++
        [{<<"trouble">>, T} || T <- [maps:get(trouble, In, undefined)], T =/= undefined]),
    maps:merge(Optional, Digests#{
        <<"node">> => Node,
        <<"observed">> => maps:get(observed, In, true),
        <<"listed">> => Listed,
        <<"connected">> => Conn,
        <<"invalid">> => Invalid,
        <<"connectedOfListed">> => iolist_to_binary([integer_to_binary(Conn), $/, integer_to_binary(Listed)]),
        <<"notConnected">> => [#{<<"node">> => N, <<"reason">> => R} || {N, R} <- lists:sublist(Sorted, ?LIST_CAP)],
        <<"notConnectedOmitted">> => max(0, length(Sorted) - ?LIST_CAP),
        <<"selfCheck">> => SelfCheck
    }).

list(undefined) -> [];
list(L) -> L.

set(L) -> maps:from_list([{X, true} || X <- L]).

%% @doc Whether two views are the same for the budget: every field but `reportedAt' and
%% `topologyResourceVersion' (it moves with every write of the topology, the operator's own
%% mesh writes included; were it part of the view, each of them would make every member write).
-spec same_view(view(), view()) -> boolean().
same_view(A, B) ->
    maps:remove(<<"topologyResourceVersion">>, A) =:= maps:remove(<<"topologyResourceVersion">>, B).

%% @doc A set of node names as one short value: CRC-32 of the names in byte order, each followed
%% by a line feed; 8 lowercase hex digits (§8.2).
-spec digest([binary()]) -> binary().
digest(Names) ->
    iolist_to_binary(io_lib:format("~8.16.0b", [erlang:crc32([[N, $\n] || N <- lists:sort(Names)])])).

%% @doc A reader's trouble as the report says it: a CamelCase cause (`no_status' is
%% `NoStatusYet', as other readers say it), what it saw (at most 1024 characters), and since when.
-spec trouble(atom(), binary(), integer()) -> #{binary() => binary()}.
trouble(Cause, Detail, SinceMs) ->
    Message =
        case unicode:characters_to_list(Detail) of
            L when is_list(L) -> unicode:characters_to_binary(lists:sublist(L, ?MESSAGE_MAX));
            _ -> <<>>
        end,
    #{<<"cause">> => cause(Cause), <<"message">> => Message, <<"since">> => rfc3339(SinceMs)}.

cause(no_status) -> <<"NoStatusYet">>;
cause(C) -> iolist_to_binary([string:titlecase(W) || W <- string:lexemes(atom_to_list(C), "_")]).

%% @doc Seconds precision, UTC, as Kubernetes writes its own times.
-spec rfc3339(integer()) -> binary().
rfc3339(Ms) ->
    list_to_binary(calendar:system_time_to_rfc3339(Ms div 1000, [{unit, second}, {offset, "Z"}])).

%% @doc The report's name: `<pod>.<topology>'.
-spec object_name(binary(), binary()) -> binary().
object_name(Pod, Topology) -> <<Pod/binary, ".", Topology/binary>>.

%% @doc The server-side apply's path (its query: the field manager, force).
-spec path(binary(), binary(), binary()) -> binary().
path(Namespace, Name, FieldManager) ->
    iolist_to_binary([<<"/apis/cluster.netzlive.io/v1alpha1/namespaces/">>, Namespace,
        <<"/clustertopologymembers/">>, Name, <<"?fieldManager=">>, FieldManager, <<"&force=true">>]).

%% @doc The whole report (§8.1), written at `ReportedAtMs' (system time).
-spec report(identity(), view(), integer()) -> #{binary() => cluster_topology_json:value()}.
report(#{namespace := NS, topology := T, pod := Pod, uid := Uid}, View, ReportedAtMs) ->
    #{
        <<"apiVersion">> => <<"cluster.netzlive.io/v1alpha1">>,
        <<"kind">> => <<"ClusterTopologyMember">>,
        <<"metadata">> => #{
            <<"name">> => object_name(Pod, T),
            <<"namespace">> => NS,
            <<"labels">> => #{<<"cluster.netzlive.io/topology">> => T},
            <<"ownerReferences">> => [#{<<"apiVersion">> => <<"v1">>, <<"kind">> => <<"Pod">>,
                <<"name">> => Pod, <<"uid">> => Uid}]
        },
        <<"spec">> => #{<<"topology">> => T, <<"pod">> => #{<<"name">> => Pod, <<"uid">> => Uid}},
        <<"status">> => View#{<<"reportedAt">> => rfc3339(ReportedAtMs)}
    }.

%% @doc An answer's outcome for the budget (§8.4): 401, 403 (no permission) and 404 (the kind is
%% not served) are `forbidden': the server changed nothing, and asking again soon will not help;
%% any other failure is `failed'.
-spec outcome({ok, integer(), term(), term()} | {error, term()}) -> outcome().
outcome({ok, Code, _, _}) when Code >= 200, Code < 300 -> ok;
outcome({ok, Code, _, _}) when Code =:= 401; Code =:= 403; Code =:= 404 -> forbidden;
outcome(_) -> failed.

%% @doc As `plan/4' with the protocol's budget.
-spec plan(history(), view(), integer()) -> plan().
plan(History, View, Now) -> plan(History, View, Now, budget()).

%% @doc Whether to write `View' now (§8.4): `write'; `{wait, At}': a write is due but not before
%% `At' (ask again then, with the view of that moment); `{idle, At}': nothing to write, the
%% renewal falls due at `At'.
-spec plan(history(), view(), integer(), budget()) -> plan().
plan(History, View, Now, #{min_interval_ms := Min, renew_ms := Renew, retry_ms := Retry}) ->
    {Due, RenewAt} =
        case History of
            #{written := {W, At}} -> {not same_view(W, View) orelse Now >= At + Renew, At + Renew};
            _ -> {true, Now}
        end,
    case Due of
        false ->
            {idle, RenewAt};
        true ->
            Earliest =
                case History of
                    #{attempt := {At1, ok}} -> At1 + Min;
                    #{attempt := {At1, forbidden}} -> At1 + Renew;
                    #{attempt := {At1, failed}} -> At1 + Retry;
                    _ -> Now
                end,
            case Now >= Earliest of
                true -> write;
                false -> {wait, Earliest}
            end
    end.

%% @doc The history after an attempt to write `View' at `At': a refusal changed nothing on the
%% server; any other failure may have, so what it holds is forgotten and the next plan writes.
-spec record_attempt(history(), view(), integer(), outcome()) -> history().
record_attempt(History, View, At, Outcome) ->
    Written =
        case Outcome of
            ok -> #{written => {View, At}};
            forbidden -> maps:with([written], History);
            failed -> #{}
        end,
    Written#{attempt => {At, Outcome}}.
