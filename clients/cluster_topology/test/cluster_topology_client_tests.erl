%% The whole client (its supervisor, the round server and the readers) in this VM against a
%% fake API server on loopback (ct_fake_api): the supervision tree, `sys', the hook and the
%% telemetry events. eunit's VM is not distributed, so every connect_node answers `ignored'
%% (the library reports it as {error, not_distributed}); real connects are the end-to-end
%% tests' (test/e2e/beam-client in the repository).
-module(cluster_topology_client_tests).
-include_lib("eunit/include/eunit.hrl").

tmp(Name) ->
    filename:join(os:getenv("TMPDIR", "/tmp"), Name ++ "-" ++ integer_to_list(erlang:unique_integer([positive]))).

%% A fake API server: the topology lists Nodes (GET), its watch stays open and silent; the
%% Lease is live. `TopologyGet' may replace the topology's GET answer.
api(Nodes) -> api(Nodes, fun() -> {reply, 200, ct_fake_api:topology(<<"5">>, Nodes)} end).
api(Nodes, TopologyGet) ->
    _ = Nodes,
    ct_fake_api:start(fun(Kind, Path) ->
        Lease = binary:match(Path, <<"/leases">>) =/= nomatch,
        case {Kind, Lease} of
            {get, false} -> TopologyGet();
            {get, true} -> {reply, 200, ct_fake_api:lease(0, 100)};
            {watch, _} -> {stream, [], hang}
        end
    end).

opts(Api, Extra) ->
    Token = tmp("ct-token"),
    ok = file:write_file(Token, <<"t0ken">>),
    maps:merge(#{name => <<"web">>, namespace => <<"app">>, api_url => ct_fake_api:url(Api), token_file => Token,
        pod_name => <<"z">>, backoff_min_ms => 8, backoff_max_ms => 64}, Extra).

wait(What, F) -> wait(What, F, 200).
wait(What, _, 0) -> error({timeout, What});
wait(What, F, N) ->
    case F() of
        false -> timer:sleep(25), wait(What, F, N - 1);
        V -> V
    end.

start(Api, Extra) ->
    {ok, Sup} = cluster_topology:start_link(opts(Api, Extra)),
    unlink(Sup),
    Sup.

%% Runs Test(Sup) with a client of Api; the client and Api are stopped whatever happens, so a
%% failed test leaves nothing behind for the next one.
with(Api, Extra, Test) ->
    Sup = start(Api, Extra),
    try Test(Sup) after
        is_process_alive(Sup) andalso cluster_topology:stop(Sup),
        ct_fake_api:stop(Api),
        flush()
    end.

flush() -> receive _ -> flush() after 0 -> ok end.

round_done(Server) ->
    wait(last_round, fun() -> maps:get(last_round, cluster_topology:state(Server)) =/= undefined end).

%% --- the supervision tree ----------------------------------------------------------------------

tree_test() ->
    with(api([<<"a@h">>, <<"b@h">>]), #{}, fun(Sup) ->
    ?assertMatch([{server, _, worker, _}, {topology_reader, _, worker, _}, {lease_reader, _, worker, _},
                  {report, _, worker, _}],
        lists:reverse(supervisor:which_children(Sup))),
    %% The server is registered under its documented name and answers sys messages; so do the readers.
    Server = whereis(cluster_topology),
    ?assertEqual(Server, cluster_topology_sup:server(Sup)),
    ?assertEqual(s, element(1, sys:get_state(cluster_topology))),
    [?assertMatch({_, _}, sys:get_state(P)) || {Id, P, _, _} <- supervisor:which_children(Sup), Id =/= server, Id =/= report],
    {report, Writer, _, _} = lists:keyfind(report, 1, supervisor:which_children(Sup)),
    ?assertEqual(s, element(1, sys:get_state(Writer))),
    round_done(cluster_topology),
    %% state/1 takes the pid start_link returned as well as the name.
    ?assertEqual(cluster_topology:state(), cluster_topology:state(Sup)),
    ok = cluster_topology:stop(Sup),
    ?assertEqual(undefined, whereis(cluster_topology))
    end).

registered_name_declared_test() ->
    ok = case application:load(cluster_topology) of ok -> ok; {error, {already_loaded, _}} -> ok end,
    ?assertEqual({ok, [cluster_topology]}, application:get_key(cluster_topology, registered)).

a_crashed_reader_is_started_again_and_the_server_keeps_what_it_knows_test() ->
    with(api([<<"a@h">>]), #{lease => false}, fun(Sup) ->
    round_done(cluster_topology),
    [_] = [get || {fake_api, get, _} <- drain()],
    Server = whereis(cluster_topology),
    {topology_reader, Reader, _, _} = lists:keyfind(topology_reader, 1, supervisor:which_children(Sup)),
    exit(Reader, kill),
    %% The new reader reads the object again; the server is the same process, with its list.
    wait(second_get, fun() -> receive {fake_api, get, _} -> true after 0 -> false end end),
    {topology_reader, Reader2, _, _} = lists:keyfind(topology_reader, 1, supervisor:which_children(Sup)),
    ?assertNotEqual(Reader, Reader2),
    ?assertEqual(Server, whereis(cluster_topology)),
    ?assertMatch(#{status := #{seen := true}, peers := [#{node := <<"a@h">>}]}, cluster_topology:state())
    end).

a_crashed_server_takes_the_readers_with_it_test() ->
    with(api([<<"a@h">>]), #{lease => false}, fun(Sup) ->
    round_done(cluster_topology),
    Before = supervisor:which_children(Sup),
    exit(whereis(cluster_topology), kill),
    wait(restarted, fun() ->
        After = supervisor:which_children(Sup),
        lists:all(fun({Id, P, _, _}) -> is_pid(P) andalso P =/= element(2, lists:keyfind(Id, 1, Before)) end, After)
    end),
    %% The new readers told the new server everything again.
    round_done(cluster_topology)
    end).

in_a_users_supervisor_test() ->
    Api = api([<<"a@h">>]),
    Spec = cluster_topology:child_spec(maps:to_list(opts(Api, #{register => ct_user_client}))),
    ?assertMatch(#{id := {cluster_topology, ct_user_client}, type := supervisor}, Spec),
    {ok, User} = supervisor:start_link(ct_user_sup, []),
    unlink(User),
    {ok, _} = supervisor:start_child(User, Spec),
    round_done(ct_user_client),
    ok = supervisor:terminate_child(User, {cluster_topology, ct_user_client}),
    ?assertEqual(undefined, whereis(ct_user_client)),
    exit(User, shutdown),
    ct_fake_api:stop(Api),
    flush().

drain() -> receive M -> [M | drain()] after 0 -> [] end.

%% --- the hook ----------------------------------------------------------------------------------

hook_that_crashes_is_detached_with_one_warning_test() ->
    Test = self(),
    Hook = fun(E) -> Test ! {hook, maps:get(event, E)}, error(boom) end,
    Log = ct_log:start(),
    with(api([<<"a@h">>]), #{hook => Hook, lease => false}, fun(_) ->
    %% After the first event the status brings (the hook crashes on it), the self check changes
    %% and a round runs: both would have gone to the hook.
    round_done(cluster_topology),
    #{hook := HookState, self_check := SelfCheck} = cluster_topology:state(),
    Lines = [T || {warning, T} <- ct_log:stop(Log), binary:match(T, <<"hook">>) =/= nomatch],
    ?assertEqual([status], [E || {hook, E} <- drain()]),
    ?assertEqual(detached, HookState),
    ?assertMatch(#{ok := _}, SelfCheck),
    ?assertMatch([<<"cluster_topology: the hook crashed on a status event (error:boom); it is detached", _/binary>>], Lines)
    end).

hook_that_works_gets_every_event_test() ->
    Test = self(),
    with(api([<<"a@h">>]), #{hook => fun(E) -> Test ! {hook, maps:get(event, E)} end, lease => false}, fun(_) ->
        round_done(cluster_topology),
        ?assertEqual(attached, maps:get(hook, cluster_topology:state())),
        ?assertEqual([status, self_check, round], [E || {hook, E} <- drain()])
    end).

%% --- its own entry ----------------------------------------------------------------------------

%% The list names this pod (a) under a name the node does not have (eunit's VM is not even
%% distributed): that entry is the client's own, never dialled (docs/status-protocol.md §2); b is.
own_entry_is_never_dialled_test() ->
    with(api([<<"a@h">>, <<"b@h">>]), #{pod_name => <<"a">>, lease => false}, fun(_) ->
        round_done(cluster_topology),
        #{last_round := #{called := Called}, self_check := SelfCheck} = cluster_topology:state(),
        ?assertEqual([<<"b@h">>], Called),
        ?assertMatch(#{ok := false}, SelfCheck)
    end).

%% --- the operator's liveness -------------------------------------------------------------------

%% A status read while the Lease is stale is not current (§4): nothing is dialled and the trouble
%% says why; once the Lease is live again, the status is acted on.
stale_lease_keeps_until_live_test() ->
    Renewed = counters:new(1, []),
    Liveness = fun() -> maps:get(value, maps:get(liveness, cluster_topology:state())) end,
    Api = ct_fake_api:start(fun(Kind, Path) ->
        Lease = binary:match(Path, <<"/leases">>) =/= nomatch,
        case {Kind, Lease} of
            %% The status only once the client holds the Lease for stale (before, liveness is
            %% unknown, and an unknown liveness is acted on).
            {get, false} ->
                wait(stale, fun() -> Liveness() =:= stale end),
                {reply, 200, ct_fake_api:topology(<<"5">>, [<<"b@h">>])};
            {get, true} -> {reply, 200, ct_fake_api:lease(500, 100)};
            {watch, false} -> {stream, [], hang};
            %% The Lease's watch ends at once until the test renews the Lease; then it brings it.
            {watch, true} ->
                case counters:get(Renewed, 1) of
                    0 -> {stream, [], close};
                    _ -> {stream, [ct_fake_api:event(<<"MODIFIED">>, ct_fake_api:lease(0, 100))], hang}
                end
        end
    end),
    with(Api, #{}, fun(_) ->
        wait(status_stale, fun() -> maps:get(trouble, cluster_topology:state()) =/= undefined end),
        #{trouble := #{cause := Cause}, last_round := Before} = cluster_topology:state(),
        ?assertEqual(status_stale, Cause),
        ?assertEqual(undefined, Before),
        %% The Lease is renewed: the next watch of its reader brings it.
        counters:add(Renewed, 1, 1),
        round_done(cluster_topology),
        #{trouble := After, last_round := #{called := Called}} = cluster_topology:state(),
        ?assertEqual(undefined, After),
        ?assertEqual([<<"b@h">>], Called)
    end).

%% --- telemetry ---------------------------------------------------------------------------------

%% No telemetry package can be installed where these tests run: this is a stand-in with
%% telemetry's execute/3, which sends each call to the test (a process registered as
%% ct_telemetry_calls). It is loaded only for this test.
fake_telemetry() ->
    Src = "-module(telemetry).\n-export([execute/3]).\n"
          "execute(Name, Measurements, Metadata) -> ct_telemetry_calls ! {telemetry, Name, Measurements, Metadata}, ok.\n",
    {ok, Tokens, _} = erl_scan:string(Src),
    Forms = [F || Part <- split_forms(Tokens), {ok, F} <- [erl_parse:parse_form(Part)]],
    {ok, telemetry, Bin} = compile:forms(Forms, []),
    {module, telemetry} = code:load_binary(telemetry, "telemetry.erl", Bin),
    ok.

split_forms(Tokens) ->
    {Forms, []} = lists:foldl(fun
        ({dot, _} = D, {Acc, Cur}) -> {[lists:reverse([D | Cur]) | Acc], []};
        (T, {Acc, Cur}) -> {Acc, [T | Cur]}
    end, {[], []}, Tokens),
    lists:reverse(Forms).

unload_telemetry() ->
    code:purge(telemetry),
    code:delete(telemetry),
    code:purge(telemetry).

telemetry_events_test() ->
    ?assertEqual(false, cluster_topology_telemetry:available()),
    fake_telemetry(),
    register(ct_telemetry_calls, self()),
    try
        %% The first GET of the topology answers 503 (trouble began), the next one the status
        %% (trouble ended); the status lists a@h, b@h (pod b) and an invalid name.
        N = counters:new(1, []),
        Api = api([], fun() ->
            counters:add(N, 1, 1),
            case counters:get(N, 1) of
                1 -> {reply, 503, <<"{\"kind\":\"Status\",\"code\":503,\"message\":\"not yet\"}">>};
                _ -> {reply, 200, ct_fake_api:topology(<<"5">>, [<<"a@h">>, <<"b@h">>, <<"bad name@h">>])}
            end
        end),
        Calls = with(Api, #{}, fun(Sup) ->
            round_done(cluster_topology),
            wait(live, fun() -> maps:get(value, maps:get(liveness, cluster_topology:state())) =:= live end),
            ?assertEqual(true, maps:get(telemetry, cluster_topology:state())),
            ok = cluster_topology:stop(Sup),
            [{Name, M, Meta} || {telemetry, Name, M, Meta} <- drain()]
        end),
        Names = [Name || {Name, _, _} <- Calls],
        Topology = <<"app/web">>,
        Find = fun(Name) -> [{M, Meta} || {X, M, Meta} <- Calls, X =:= Name] end,
        [{TroubleStart, TroubleStartMeta}] = Find([cluster_topology, trouble, start]),
        ?assertMatch(#{system_time := T} when is_integer(T), TroubleStart),
        ?assertMatch(#{topology := Topology, cause := api_error, detail := <<"503 not yet">>}, TroubleStartMeta),
        [{TroubleStop, TroubleStopMeta}] = Find([cluster_topology, trouble, stop]),
        ?assertMatch(#{duration := D} when is_integer(D), TroubleStop),
        ?assertMatch(#{topology := Topology, cause := api_error}, TroubleStopMeta),
        [{Status, StatusMeta}] = Find([cluster_topology, status]),
        ?assertMatch(#{listed := 2, connected := 0, invalid := 1, decode_time := Dt} when is_integer(Dt), Status),
        ?assertMatch(#{topology := Topology, resource_version := <<"5">>}, StatusMeta),
        [{_, SelfCheckMeta}] = Find([cluster_topology, self_check]),
        %% eunit's VM is not distributed: the self check says so.
        ?assertMatch(#{topology := Topology, result := false}, SelfCheckMeta),
        ?assertMatch([{#{}, #{topology := Topology, value := live, previous := unknown}}], Find([cluster_topology, liveness])),
        Connects = Find([cluster_topology, connect]),
        ?assertEqual(['a@h', 'b@h'], lists:sort([maps:get(node, Meta) || {_, Meta} <- Connects])),
        [?assertMatch({#{duration := _}, #{topology := Topology, result := error, reason := not_distributed}}, C) || C <- Connects],
        ?assertMatch([{#{duration := _, called := 2, connected := 0, failed := 2, disconnected := 0}, #{topology := Topology}}],
            Find([cluster_topology, round])),
        %% Nothing else, and only events of this library.
        ?assertEqual([], [X || X <- Names, not lists:member(X, [[cluster_topology, trouble, start],
            [cluster_topology, trouble, stop], [cluster_topology, status], [cluster_topology, self_check],
            [cluster_topology, liveness], [cluster_topology, connect], [cluster_topology, round]])])
    after
        unregister(ct_telemetry_calls),
        unload_telemetry()
    end,
    ?assertEqual(false, cluster_topology_telemetry:available()).

without_telemetry_no_event_test() ->
    with(api([<<"a@h">>]), #{lease => false}, fun(_) ->
        round_done(cluster_topology),
        ?assertEqual(false, maps:get(telemetry, cluster_topology:state()))
    end).
