%% Why a connect failed, with real nodes on loopback: the member report's reason for a listed peer
%% that does not answer is `Timeout', for one that refuses the handshake (a different cookie)
%% `Refused'. The peer that does not answer is a loopback port registered in EPMD under a node
%% name: it accepts the TCP connection and never says a word, so net_kernel's setup timer ends
%% the attempt. This node becomes distributed for the test (with a setup time of 2 s, to keep
%% the test short) and stops being so at its end.
-module(cluster_topology_connect_tests).
-include_lib("eunit/include/eunit.hrl").

-define(SETUP_S, 2).

timeout_and_refused_test_() ->
    {timeout, 120, fun timeout_and_refused/0}.

timeout_and_refused() ->
    ?assertEqual(nonode@nohost, node()),
    Id = integer_to_list(erlang:unique_integer([positive])),
    %% The peer with another cookie is started first: its `erl -name' starts EPMD if none runs.
    {ok, Peer, Other} = peer:start_link(#{name => "ct_cookie_" ++ Id, host => "127.0.0.1", longnames => true,
        connection => standard_io, args => ["-setcookie", "ct_other_cookie"]}),
    Silent = silent_node("ct_silent_" ++ Id),
    ok = application:set_env(kernel, net_setuptime, ?SETUP_S),
    {ok, _} = net_kernel:start(list_to_atom("ct_connect_" ++ Id ++ "@127.0.0.1"), #{name_domain => longnames}),
    true = erlang:set_cookie(node(), ct_this_cookie),
    try
        Want = #{atom_to_binary(Silent, utf8) => <<"Timeout">>, atom_to_binary(Other, utf8) => <<"Refused">>},
        with_client([Silent, Other], fun(Sup) ->
            %% Each round tries both again (retry_ms): the condition is met once a round gave both.
            ?assertEqual(Want, wait_for(fun() -> reasons(Sup) end, Want, 30000)),
            %% The report as written: both peers not connected, with those reasons.
            ?assertEqual([#{<<"node">> => N, <<"reason">> => W} || {N, W} <- lists:sort(maps:to_list(Want))],
                maps:get(<<"notConnected">>, view(Sup), none))
        end)
    after
        _ = net_kernel:stop(),
        ok = application:unset_env(kernel, net_setuptime),
        peer:stop(Peer),
        stop_silent(Silent)
    end.

%% --- a node name whose port accepts and never speaks -----------------------------------------------

%% Listens on a loopback port, accepts every connection and keeps it silent, and registers the
%% port in EPMD under `Name' (ALIVE2_REQ, erts' distribution protocol: the registration lasts
%% while its connection stays open).
silent_node(Name) ->
    Test = self(),
    Pid = spawn(fun() ->
        {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false}]),
        {ok, Port} = inet:port(L),
        {ok, Epmd} = gen_tcp:connect({127, 0, 0, 1}, epmd_port(), [binary, {active, false}]),
        N = list_to_binary(Name),
        Req = <<120, Port:16, 77, 0, 6:16, 5:16, (byte_size(N)):16, N/binary, 0:16>>,
        ok = gen_tcp:send(Epmd, <<(byte_size(Req)):16, Req/binary>>),
        {ok, <<Tag, 0, _/binary>>} = gen_tcp:recv(Epmd, 0, 5000),
        true = Tag =:= 121 orelse Tag =:= 118,
        Test ! {silent, self()},
        accept_silently(L, [Epmd])
    end),
    receive {silent, Pid} -> ok after 10000 -> error(epmd_registration) end,
    put(silent, Pid),
    list_to_atom(Name ++ "@127.0.0.1").

accept_silently(L, Held) ->
    case gen_tcp:accept(L, 100) of
        {ok, S} -> accept_silently(L, [S | Held]);
        {error, timeout} ->
            receive stop -> ok after 0 -> accept_silently(L, Held) end
    end.

stop_silent(_) ->
    Pid = get(silent),
    Ref = monitor(process, Pid),
    Pid ! stop,
    receive {'DOWN', Ref, _, _, _} -> ok end.

epmd_port() ->
    case os:getenv("ERL_EPMD_PORT") of
        false -> 4369;
        P -> list_to_integer(P)
    end.

%% --- the client, its report writer's facts ------------------------------------------------------

with_client(Peers, Test) ->
    Token = filename:join(os:getenv("TMPDIR", "/tmp"), "ct-token-" ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = file:write_file(Token, <<"t0ken">>),
    Entry = fun(Node, Pod) -> #{<<"nodeName">> => atom_to_binary(Node, utf8), <<"pod">> => Pod, <<"uid">> => <<"u-", Pod/binary>>} end,
    Topology = ct_fake_api:object(<<"5">>, #{<<"status">> => #{<<"lastResponse">> => #{<<"code">> => <<"200">>},
        <<"peers">> => [Entry(node(), <<"z">>) | [Entry(N, <<"p", (integer_to_binary(I))/binary>>) || {I, N} <- lists:enumerate(Peers)]]}}),
    Api = ct_fake_api:start(fun(Kind, Path) ->
        case {Kind, binary:match(Path, <<"/clustertopologymembers/">>)} of
            {get, nomatch} -> {reply, 200, Topology};
            {get, _} -> {reply, 201, <<"{}">>};
            {watch, _} -> {stream, [], hang}
        end
    end),
    {ok, Sup} = cluster_topology:start_link(#{name => <<"web">>, namespace => <<"app">>,
        api_url => ct_fake_api:url(Api), token_file => Token, pod_name => <<"z">>, lease => false,
        retry_ms => 200}),
    unlink(Sup),
    try Test(Sup) after
        cluster_topology:stop(Sup),
        ct_fake_api:stop(Api),
        file:delete(Token),
        flush()
    end.

%% The fake API told this process of every request; the next test must not read those.
flush() -> receive {fake_api, _, _} -> flush() after 0 -> ok end.

%% The last reason per peer, as the round server told the report writer (nothing told yet: none).
reasons(Sup) -> maps:get(reasons, facts(Sup), #{}).

facts(Sup) ->
    {report, Writer, _, _} = lists:keyfind(report, 1, supervisor:which_children(Sup)),
    case [E || E <- tuple_to_list(sys:get_state(Writer)), is_map(E), is_map_key(reasons, E)] of
        [F] -> F;
        [] -> #{}
    end.

%% The view the writer writes from those facts.
view(Sup) ->
    F = facts(Sup),
    cluster_topology_member:view(#{node => atom_to_binary(node(), utf8), pod => <<"z">>, peers => maps:get(peers, F),
        resource_version => maps:get(resource_version, F), connected => [], reasons => maps:get(reasons, F),
        invalid => [], trouble => undefined}).

%% F() until it gives Want (a condition, polled); at the end, its last answer, whatever it is.
wait_for(F, Want, Ms) ->
    wait_until(F, Want, erlang:monotonic_time(millisecond) + Ms).

wait_until(F, Want, Until) ->
    case F() of
        Want -> Want;
        Other ->
            case erlang:monotonic_time(millisecond) > Until of
                true -> Other;
                false -> timer:sleep(100), wait_until(F, Want, Until)
            end
    end.
