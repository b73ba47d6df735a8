%% This member's report: the pure parts (cluster_topology_member) by example, and the writer
%% (cluster_topology_report) in the client's tree against a fake API server on loopback. That the
%% view and the budget agree with the TypeScript is test/unit/beam-client/member-report.test.ts;
%% the writes on a real API server are test/e2e/beam-client/member-report.test.ts.
-module(cluster_topology_report_tests).
-include_lib("eunit/include/eunit.hrl").

digest_test_() ->
    D = fun cluster_topology_member:digest/1,
    [?_assertEqual(<<"255eab48">>, D([<<"c@h">>, <<"a@h">>, <<"b@h">>])),
     ?_assertEqual(<<"00000000">>, D([]))].

trouble_test_() ->
    T = fun(C) -> maps:get(<<"cause">>, cluster_topology_member:trouble(C, <<"x">>, 0)) end,
    [?_assertEqual(<<"NoStatusYet">>, T(no_status)),
     ?_assertEqual(<<"ApiUnreachable">>, T(api_unreachable)),
     ?_assertEqual(<<"StatusStale">>, T(status_stale)),
     ?_assertEqual(<<"Forbidden">>, T(forbidden)),
     ?_assertEqual(<<"1970-01-01T00:00:00Z">>, maps:get(<<"since">>, cluster_topology_member:trouble(x, <<>>, 999))),
     %% The schema's limit is 1024 characters (not bytes).
     ?_assertEqual(1024, string:length(maps:get(<<"message">>,
         cluster_topology_member:trouble(x, binary:copy(<<"é"/utf8>>, 2000), 0))))].

%% The outcomes of §8.4: a refusal (401, 403, 404) changed nothing and is not asked again soon.
outcome_test_() ->
    O = fun(C) -> cluster_topology_member:outcome({ok, C, [], <<>>}) end,
    [?_assertEqual(ok, O(200)), ?_assertEqual(ok, O(201)),
     ?_assertEqual(forbidden, O(401)), ?_assertEqual(forbidden, O(403)), ?_assertEqual(forbidden, O(404)),
     ?_assertEqual(failed, O(409)), ?_assertEqual(failed, O(500)),
     ?_assertEqual(failed, cluster_topology_member:outcome({error, timeout}))].

%% What the writer sends is JSON the library's own decoder reads back as the same value, with
%% the characters JSON must escape.
encode_test() ->
    V = #{<<"a\"b\\c">> => [<<"\n\t\x01é"/utf8>>, 1, -2, true, false, null, #{}], <<"e">> => []},
    ?assertEqual({ok, V}, cluster_topology_json:decode(iolist_to_binary(cluster_topology_json:encode(V)))).

%% --- the writer in the client's tree -------------------------------------------------------------

tmp(Name) ->
    filename:join(os:getenv("TMPDIR", "/tmp"), Name ++ "-" ++ integer_to_list(erlang:unique_integer([positive]))).

%% The topology lists this pod (z, uid u-z) and a@h; the report's PATCH gets `Patch()'.
api(Patch) ->
    Topology = ct_fake_api:object(<<"5">>, #{<<"status">> => #{<<"lastResponse">> => #{<<"code">> => <<"200">>},
        <<"peers">> => [#{<<"nodeName">> => <<"z@h">>, <<"pod">> => <<"z">>, <<"uid">> => <<"u-z">>},
                        #{<<"nodeName">> => <<"a@h">>, <<"pod">> => <<"a">>, <<"uid">> => <<"u-a">>}]}}),
    ct_fake_api:start(fun(Kind, Path) ->
        case {Kind, binary:match(Path, <<"/clustertopologymembers/">>)} of
            {get, nomatch} -> {reply, 200, Topology};
            {get, _} -> Patch();
            {watch, _} -> {stream, [], hang}
        end
    end).

with(Api, Extra, Test) ->
    Token = tmp("ct-token"),
    ok = file:write_file(Token, <<"t0ken">>),
    {ok, Sup} = cluster_topology:start_link(maps:merge(#{name => <<"web">>, namespace => <<"app">>,
        api_url => ct_fake_api:url(Api), token_file => Token, pod_name => <<"z">>, lease => false,
        backoff_min_ms => 8, backoff_max_ms => 64}, Extra)),
    unlink(Sup),
    try Test(Sup) after
        is_process_alive(Sup) andalso cluster_topology:stop(Sup),
        ct_fake_api:stop(Api),
        flush()
    end.

flush() -> receive _ -> flush() after 0 -> ok end.

patch_path() ->
    receive
        {fake_api, get, <<"/apis/cluster.netzlive.io/v1alpha1/namespaces/app/clustertopologymembers/", _/binary>> = P} -> P
    after 5000 -> error(no_report_write)
    end.

%% The writer is the tree's last child; it answers sys while its write waits for an answer.
last_child_answers_sys_while_writing_test() ->
    with(api(fun() -> hang end), #{}, fun(Sup) ->
        ?assertMatch([{server, _, _, _}, {topology_reader, _, _, _}, {report, _, _, _}],
            lists:reverse(supervisor:which_children(Sup))),
        ?assertEqual(<<"/apis/cluster.netzlive.io/v1alpha1/namespaces/app/clustertopologymembers/z.web"
            "?fieldManager=cluster_topology&force=true">>, patch_path()),
        {report, Writer, _, _} = lists:keyfind(report, 1, supervisor:which_children(Sup)),
        S = sys:get_state(Writer, 1000),
        %% A write in flight (the fake API never answers it).
        ?assertMatch({R, M, #{}, _, _} when is_reference(R) andalso is_reference(M), element(9, S)) % #s.request
    end).

%% `report => false': no writer, nothing written.
report_false_test() ->
    with(api(fun() -> {reply, 201, <<"{}">>} end), #{report => false}, fun(Sup) ->
        ?assertEqual([server, topology_reader], [Id || {Id, _, _, _} <- lists:reverse(supervisor:which_children(Sup))]),
        cluster_topology:state(Sup),
        receive {fake_api, get, <<"/apis/cluster.netzlive.io/v1alpha1/namespaces/app/clustertopologymembers/", _/binary>>} ->
            error(written)
        after 1000 -> ok
        end
    end).

%% A 403 is one warning; the tree is untouched (no restart), and no second write comes soon.
forbidden_is_one_warning_test() ->
    Log = ct_log:start(),
    Body = <<"{\"kind\":\"Status\",\"code\":403,\"message\":\"clustertopologymembers is forbidden\"}">>,
    Logged = with(api(fun() -> {reply, 403, Body} end), #{}, fun(Sup) ->
        Before = supervisor:which_children(Sup),
        _ = patch_path(),
        receive {fake_api, get, <<"/apis/cluster.netzlive.io/v1alpha1/namespaces/app/clustertopologymembers/", _/binary>>} ->
            error(written_again)
        after 1500 -> ok
        end,
        ?assertEqual(Before, supervisor:which_children(Sup)),
        ct_log:stop(Log)
    end),
    Warnings = [T || {warning, T} <- Logged, binary:match(T, <<"member's report">>) =/= nomatch],
    ?assertMatch([_], Warnings),
    [W] = Warnings,
    ?assertNotEqual(nomatch, binary:match(W, <<"403: not allowed">>)),
    ?assertNotEqual(nomatch, binary:match(W, <<"clustertopologymembers is forbidden">>)).
