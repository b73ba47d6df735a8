%% The status protocol's shared vectors (test/protocol-vectors/ at the repository's root; its
%% README says what a case holds), run with this library's own pure functions: its JSON decoder,
%% cluster_topology_status (what the status states, the staleness rule, whether to act, the names
%% to dial) and cluster_topology_round:plan/3. The TypeScript reader runs the same files
%% (test/unit/protocol/vectors.test.ts).
-module(cluster_topology_vectors_tests).
-include_lib("eunit/include/eunit.hrl").

-define(CASE_KEYS, [<<"description">>, <<"doc">>, <<"topology">>, <<"lease">>, <<"now">>, <<"reader">>, <<"expect">>]).
-define(READER_KEYS, [<<"self">>, <<"pod">>, <<"remembered">>, <<"maxPeers">>]).
-define(EXPECT_KEYS, [<<"status">>, <<"liveness">>, <<"act">>, <<"round">>, <<"flags">>]).
%% A reader without a limit: more than any list can hold.
-define(NO_LIMIT, 1 bsl 32).

vectors_test_() ->
    Dir = vectors_dir(),
    Files = lists:sort(filelib:wildcard(filename:join(Dir, "*.json"))),
    [?_assert(length(Files) >= 15) | [{filename:basename(F), fun() -> run(F) end} || F <- Files]].

%% The folder, from this file's own place (clients/cluster_topology/test/ in the repository) or, when the
%% sources were compiled elsewhere, from the working directory (clients/cluster_topology or the root);
%% CT_PROTOCOL_VECTORS names it outright.
vectors_dir() ->
    Candidates =
        [D || D <- [os:getenv("CT_PROTOCOL_VECTORS")], D =/= false] ++
            [filename:join([filename:dirname(?FILE), "..", "..", "..", "test", "protocol-vectors"]),
             filename:join(["..", "..", "test", "protocol-vectors"]),
             filename:join(["test", "protocol-vectors"])],
    case [D || D <- Candidates, filelib:is_file(filename:join(D, "README.md"))] of
        [Dir | _] -> Dir;
        [] -> error({no_protocol_vectors, Candidates})
    end.

run(File) ->
    {ok, Bin} = file:read_file(File),
    {ok, V} = cluster_topology_json:decode(Bin),
    ?assertEqual([], form_problems(V)),
    #{<<"expect">> := Expect} = V,
    ?assertEqual(expected(Expect), outcome(V)).

%% --- what the library makes of a vector, in the vector's own terms -----------------------------

outcome(#{<<"topology">> := Topology, <<"lease">> := LeaseIn, <<"now">> := NowIn, <<"reader">> := Reader,
        <<"expect">> := Expect}) ->
    Now = calendar:rfc3339_to_system_time(binary_to_list(NowIn), [{unit, millisecond}]),
    Max = maps:get(<<"maxPeers">>, Reader, ?NO_LIMIT),
    Meaning = cluster_topology_status:interpret(Topology, Max),
    Liveness = cluster_topology_status:liveness(lease(LeaseIn), Now),
    Act = cluster_topology_status:act(Meaning, Liveness),
    Out0 = #{},
    Out1 = given(<<"flags">>, Expect, given(<<"status">>, Expect, Out0, fun() -> status(Meaning) end),
                 fun() -> flags(Meaning) end),
    Out2 = given(<<"liveness">>, Expect, Out1, fun() -> atom_to_binary(maps:get(value, Liveness), utf8) end),
    Out3 = given(<<"act">>, Expect, Out2, fun() -> element(1, Act) =:= act end),
    case {maps:is_key(<<"round">>, Expect), Act} of
        {true, {act, Current}} ->
            #{<<"self">> := Self, <<"pod">> := Pod, <<"remembered">> := Remembered} = Reader,
            Desired = cluster_topology_status:node_names(maps:get(peers, Current), Pod),
            #{connect := C, disconnect := D} = cluster_topology_round:plan(Remembered, Desired, Self),
            Out3#{<<"round">> => #{<<"connect">> => lists:sort(C), <<"disconnect">> => lists:sort(D)}};
        _ ->
            Out3
    end.

given(Key, Expect, Out, F) ->
    case maps:is_key(Key, Expect) of
        true -> Out#{Key => F()};
        false -> Out
    end.

lease(<<"missing">>) -> missing;
lease(#{<<"unreadable">> := Why} = L) when map_size(L) =:= 1 -> {unreadable, Why};
lease(Lease) -> Lease.

status({current, #{peers := Peers, invalid := Invalid}}) ->
    #{<<"kind">> => <<"current">>,
      <<"names">> => cluster_topology_status:node_names(Peers),
      <<"invalid">> => [#{<<"node">> => N, <<"problem">> => P} || #{node := N, problem := P} <- Invalid]};
status({unknown, _}) ->
    #{<<"kind">> => <<"unknown">>};
status({error, _}) ->
    #{<<"kind">> => <<"refused">>}.

%% Each valid entry's flags, in list order: true, false or unknown.
flags({current, #{peers := Peers}}) ->
    [#{<<"node">> => N,
       <<"terminating">> => flag(T), <<"ready">> => flag(R), <<"serving">> => flag(S)}
     || #{node := N, terminating := T, ready := R, serving := S} <- Peers];
flags(Other) ->
    maps:get(<<"kind">>, status(Other)).

flag(unknown) -> <<"unknown">>;
flag(B) -> B.

%% The expectation as compared: the round's lists as sets.
expected(#{<<"round">> := #{<<"connect">> := C, <<"disconnect">> := D}} = E) ->
    E#{<<"round">> => #{<<"connect">> => lists:sort(C), <<"disconnect">> => lists:sort(D)}};
expected(E) ->
    E.

%% --- a vector this runner cannot read fails: it never passes by checking nothing ---------------

form_problems(V) when is_map(V) ->
    Unknown = fun(Where, O, Keys) ->
        case is_map(O) of
            true -> [{Where, unknown_key, K} || K <- maps:keys(O), not lists:member(K, Keys)];
            false -> [{Where, not_an_object}]
        end
    end,
    Expect = maps:get(<<"expect">>, V, undefined),
    Unknown('case', V, ?CASE_KEYS) ++
        Unknown(reader, maps:get(<<"reader">>, V, undefined), ?READER_KEYS) ++
        Unknown(expect, Expect, ?EXPECT_KEYS) ++
        [{missing, K} || K <- [<<"topology">>, <<"lease">>, <<"now">>, <<"reader">>, <<"expect">>],
            not maps:is_key(K, V)] ++
        [{expect, nothing_to_compare} || is_map(Expect), not lists:any(fun(K) -> maps:is_key(K, Expect) end, ?EXPECT_KEYS)] ++
        [{expect, round_without_act} || is_map(Expect), maps:is_key(<<"round">>, Expect),
            maps:get(<<"act">>, Expect, undefined) =/= true];
form_problems(_) ->
    [not_an_object].
