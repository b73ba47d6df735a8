%% eunit tests of the library's pure parts (and of the HTTP client against a local socket).
-module(cluster_topology_tests).
-include_lib("eunit/include/eunit.hrl").

%% --- JSON -------------------------------------------------------------------------------------

json_values_test() ->
    D = fun(B) -> cluster_topology_json:decode_builtin(B) end,
    ?assertEqual({ok, #{<<"a">> => [1, 2.5, true, false, null, <<"x">>]}}, D(<<" {\"a\": [1, 2.5, true, false, null, \"x\"]} ">>)),
    ?assertEqual({ok, <<"é😀\n\"/"/utf8>>}, D(<<"\"\\u00e9\\ud83d\\ude00\\n\\\"\\/\"">>)),
    ?assertEqual({ok, -12}, D(<<"-12">>)),
    ?assertEqual({ok, 1.0e21}, D(<<"1e21">>)),
    ?assertEqual({ok, #{}}, D(<<"{}">>)),
    ?assertEqual({ok, []}, D(<<"[ ]">>)),
    ?assertEqual({ok, 12345678901234567890}, D(<<"12345678901234567890">>)).

json_refuses_malformed_test_() ->
    Bad = [<<>>, <<"{">>, <<"[1,]">>, <<"{\"a\":1,}">>, <<"01">>, <<"1.">>, <<".5">>, <<"1e">>, <<"+1">>,
        <<"\"abc">>, <<"\"\\x\"">>, <<"\"\\ud800\"">>, <<"\"\\udc00\"">>, <<"\"a\nb\"">>, <<"tru">>,
        <<"nul">>, <<"{a:1}">>, <<"[1] 2">>, <<"\"\xff\"">>, <<"NaN">>, <<"1e400">>, <<"{\"a\" 1}">>,
        binary:copy(<<"[">>, 600)],
    [?_assertMatch({error, {invalid_json, _}}, cluster_topology_json:decode_builtin(B)) || B <- Bad].

%% A repeated key keeps its last value, as Go's encoding/json (the API server) and JSON.parse do,
%% whichever decoder runs (OTP's own json module keeps the first unless told otherwise).
json_repeated_key_keeps_last_test() ->
    Doc = <<"{\"a\":1,\"b\":{\"\":true,\"\":6e-323},\"a\":2}  ">>,
    Want = {ok, #{<<"a">> => 2, <<"b">> => #{<<>> => 6.0e-323}}},
    ?assertEqual(Want, cluster_topology_json:decode_builtin(Doc)),
    ?assertEqual(Want, cluster_topology_json:decode(Doc)),
    ?assertMatch({error, {invalid_json, _}}, cluster_topology_json:decode(<<"[1] x">>)).

%% --- node names ------------------------------------------------------------------------------

names_test_() ->
    Good = [<<"a@127.0.0.1">>, <<"web-0@web-0.web.app.svc.cluster.local">>, <<"x_y@::1">>, <<"N1@host">>],
    Bad = [<<"a">>, <<"@h">>, <<"a@">>, <<"a b@h">>, <<"a@-h">>, <<"a@h-">>, <<"a'@h">>, <<"a@h..x">>,
        <<"a@", (binary:copy(<<"x">>, 64))/binary>>, <<(binary:copy(<<"a">>, 250))/binary, "@hosts">>,
        <<"a@h\"), os:cmd(\"x">>],
    [?_assertEqual(ok, cluster_topology_name:check(N)) || N <- Good] ++
        [?_assertMatch({error, _}, cluster_topology_name:check(N)) || N <- Bad].

no_atom_for_a_bad_name_test() ->
    Name = <<"bad name@", (integer_to_binary(erlang:unique_integer([positive])))/binary>>,
    ?assertMatch({error, _}, cluster_topology_name:to_atom(Name)),
    ?assertError(badarg, binary_to_existing_atom(Name, utf8)).

%% --- status ----------------------------------------------------------------------------------

peer(N) -> #{<<"nodeName">> => N, <<"pod">> => N, <<"uid">> => <<"u-", N/binary>>, <<"terminating">> => false}.
obj(Status) -> #{<<"metadata">> => #{<<"resourceVersion">> => <<"7">>}, <<"status">> => Status}.
lr() -> #{<<"code">> => <<"200">>}.

status_current_test() ->
    {current, C} = cluster_topology_status:interpret(obj(#{<<"lastResponse">> => lr(),
        <<"peers">> => [peer(<<"a@h">>), (peer(<<"b@h">>))#{<<"ready">> => true}]}), 10),
    ?assertEqual([<<"a@h">>, <<"b@h">>], cluster_topology_status:node_names(maps:get(peers, C))),
    [A, B] = maps:get(peers, C),
    ?assertEqual(unknown, maps:get(ready, A)),
    ?assertEqual(unknown, maps:get(serving, A)),
    ?assertEqual(true, maps:get(ready, B)),
    ?assertEqual(<<"7">>, maps:get(resource_version, C)).

status_empty_is_current_test() ->
    ?assertMatch({current, #{peers := []}},
        cluster_topology_status:interpret(obj(#{<<"lastResponse">> => lr(), <<"peers">> => []}), 10)).

status_unknown_test_() ->
    I = fun(O) -> cluster_topology_status:interpret(O, 10) end,
    [?_assertMatch({unknown, _}, I(#{<<"metadata">> => #{}})),
     ?_assertMatch({unknown, _}, I(obj(#{<<"peers">> => [peer(<<"a@h">>)]}))),
     ?_assertMatch({unknown, _}, I(obj(#{<<"lastResponse">> => lr()})))].

status_malformed_test_() ->
    I = fun(S) -> cluster_topology_status:interpret(obj(S#{<<"lastResponse">> => lr()}), 3) end,
    [?_assertMatch({error, _}, I(#{<<"peers">> => <<"x">>})),
     ?_assertMatch({error, _}, I(#{<<"peers">> => [1]})),
     ?_assertMatch({error, _}, I(#{<<"peers">> => [#{<<"pod">> => <<"a">>}]})),
     ?_assertMatch({error, _}, I(#{<<"peers">> => [(peer(<<"a@h">>))#{<<"ready">> => <<"yes">>}]})),
     ?_assertMatch({error, _}, cluster_topology_status:interpret(obj(#{<<"peers">> => [], <<"lastResponse">> => 5}), 3)),
     ?_assertMatch({error, <<"status.peers holds 4 entries", _/binary>>},
         I(#{<<"peers">> => [peer(<<"a@h">>), peer(<<"b@h">>), peer(<<"c@h">>), peer(<<"d@h">>)]})),
     ?_assertMatch({error, _}, cluster_topology_status:interpret([], 3)),
     ?_assertMatch({error, _}, cluster_topology_status:interpret(#{<<"status">> => 1}, 3))].

status_invalid_names_skipped_test() ->
    {current, C} = cluster_topology_status:interpret(obj(#{<<"lastResponse">> => lr(),
        <<"peers">> => [peer(<<"a@h">>), peer(<<"x'),halt()@h">>), peer(<<"a@h">>)]}), 10),
    ?assertEqual([<<"a@h">>], cluster_topology_status:node_names(maps:get(peers, C))),
    ?assertMatch([#{node := <<"x'),halt()@h">>}], maps:get(invalid, C)).

liveness_test_() ->
    L = fun(Renew, D) -> #{<<"spec">> => #{<<"renewTime">> => Renew, <<"leaseDurationSeconds">> => D}} end,
    T = calendar:rfc3339_to_system_time("2026-01-01T00:00:00.000000Z", [{unit, millisecond}]),
    Lv = fun(X, Now) -> maps:get(value, cluster_topology_status:liveness(X, Now)) end,
    [?_assertEqual(live, Lv(L(<<"2026-01-01T00:00:00.000000Z">>, 93), T + 93000)),
     ?_assertEqual(stale, Lv(L(<<"2026-01-01T00:00:00.000000Z">>, 93), T + 93001)),
     ?_assertEqual(unknown, Lv(missing, T)),
     ?_assertEqual(unknown, Lv({unreadable, <<"403">>}, T)),
     ?_assertEqual(unknown, Lv(L(<<"yesterday">>, 93), T)),
     ?_assertEqual(unknown, Lv(L(<<"2026-01-01T00:00:00Z">>, <<"93">>), T))].

self_check_test_() ->
    Peers = [#{node => <<"a@h">>, pod => <<"a">>}, #{node => <<"gee@h">>, pod => <<"g">>}],
    SC = fun(Pod, Self) -> cluster_topology_status:self_check(Peers, Pod, Self) end,
    [?_assertMatch(#{ok := true}, SC(<<"a">>, 'a@h')),
     ?_assertMatch(#{ok := false, computed := <<"gee@h">>, node := <<"g@h">>}, SC(<<"g">>, 'g@h')),
     ?_assertMatch(#{ok := unknown}, SC(<<"z">>, 'z@h')),
     ?_assertMatch(#{ok := unknown}, SC(undefined, 'a@h')),
     ?_assertMatch(#{ok := false}, SC(<<"a">>, nonode@nohost))].

%% --- rounds ----------------------------------------------------------------------------------

plan_test() ->
    P = cluster_topology_round:plan([<<"b">>, <<"x">>, <<"b">>], [<<"self">>, <<"b">>, <<"c">>, <<"c">>], <<"self">>),
    ?assertEqual([<<"x">>], maps:get(disconnect, P)),
    %% in the order the connects are made: the one this client does not hold first
    ?assertEqual([<<"c">>, <<"b">>], maps:get(connect, P)),
    ?assertEqual(true, maps:get(self_listed, P)),
    %% an empty list from a current status disconnects what this client connected, never self
    ?assertEqual([<<"b">>], maps:get(disconnect, cluster_topology_round:plan([<<"b">>, <<"self">>], [], <<"self">>))).

plan_new_first_test() ->
    %% a@h and b@h failed before (listed, not held), z@h is held, n@h is new to the list: the
    %% status change is about n@h, so it is connected before the earlier failures are retried.
    P = cluster_topology_round:plan([<<"z@h">>], [<<"a@h">>, <<"b@h">>, <<"n@h">>, <<"z@h">>], <<"self@h">>,
        [<<"a@h">>, <<"b@h">>, <<"z@h">>]),
    ?assertEqual([<<"n@h">>, <<"a@h">>, <<"b@h">>, <<"z@h">>], maps:get(connect, P)).

complete_test() ->
    P = cluster_topology_round:plan([<<"x">>, <<"y">>], [<<"b">>, <<"c">>], <<"self">>),
    O = cluster_topology_round:complete(P, #{connect => #{<<"b">> => ok, <<"c">> => {error, refused}},
        disconnect => #{<<"x">> => ok, <<"y">> => {error, not_distributed}}}),
    ?assertEqual([<<"b">>, <<"y">>], maps:get(remembered, O)),
    ?assertEqual([{<<"c">>, {error, refused}}], maps:get(failed_connects, O)),
    ?assertEqual([<<"x">>], maps:get(disconnected, O)).

departed_test() ->
    D = fun cluster_topology_round:departed/4,
    Again = fun cluster_topology_round:again/4,
    %% a round disconnected d and e at 1000: both watched for 30 s from then
    W = D(#{}, [<<"a">>], [<<"d">>, <<"e">>], 1000),
    ?assertEqual(#{<<"d">> => 31000, <<"e">> => 31000}, W),
    %% d connected again while unlisted and watched: disconnected again; e listed again: not
    ?assert(Again(<<"d">>, W, [<<"a">>, <<"e">>], 30999)),
    ?assertNot(Again(<<"e">>, W, [<<"a">>, <<"e">>], 2000)),
    %% after its watch, or a node never disconnected by a round: left alone
    ?assertNot(Again(<<"d">>, W, [<<"a">>], 31000)),
    ?assertNot(Again(<<"x">>, W, [<<"a">>], 2000)),
    %% the next round: e listed again is forgotten, d disconnected again gets a new watch
    ?assertEqual(#{<<"d">> => 32000}, D(W, [<<"e">>], [<<"d">>], 2000)),
    %% a watch that is up is forgotten
    ?assertEqual(#{}, D(W, [], [], 31000)).

execute_not_distributed_test() ->
    %% eunit runs in a node without distribution: every call says so, nothing is remembered.
    P = cluster_topology_round:plan([<<"x@h">>], [<<"b@h">>], <<"nonode@nohost">>),
    #{results := R, called := Called} = cluster_topology_round:execute(P, #{concurrency => 2}),
    ?assertEqual([<<"b@h">>], Called),
    ?assertEqual(#{<<"b@h">> => {error, not_distributed}}, maps:get(connect, R)).

%% --- options ---------------------------------------------------------------------------------

config_test_() ->
    Env = fun(_) -> false end,
    P = fun(O) -> cluster_topology_config:parse(O, Env) end,
    Base = #{name => <<"web">>, namespace => "app", api_url => <<"https://127.0.0.1:6443">>,
        token_file => <<"/t">>, ca_file => <<"/ca">>, service_account_dir => <<"/nonexistent">>},
    [?_assertMatch({ok, #{api := #{host := "127.0.0.1", port := 6443, tls := true}, namespace := <<"app">>}}, P(Base)),
     ?_assertMatch({ok, _}, P(maps:to_list(Base))),
     %% out of a pod, with the default service account directory (absent here)
     ?_assertMatch({ok, #{cert_file := <<"/c">>, token_file := undefined}},
         P(maps:without([token_file, service_account_dir], Base#{cert_file => "/c", key_file => "/k"}))),
     ?_assertMatch({error, <<"unknown options: [colour]", _/binary>>}, P(Base#{colour => red})),
     ?_assertMatch({error, _}, P(maps:remove(name, Base))),
     ?_assertMatch({error, _}, P(Base#{retry_ms => 0})),
     ?_assertMatch({error, _}, P(Base#{cert_file => <<"/c">>})),
     ?_assertMatch({error, _}, P(maps:remove(token_file, Base))),
     ?_assertMatch({error, _}, P(maps:remove(ca_file, Base))),
     ?_assertMatch({error, _}, P(Base#{api_url => <<"ftp://x">>})),
     ?_assertMatch({ok, #{api := #{host := "::1", port := 443}}},
         cluster_topology_config:parse(maps:remove(api_url, Base),
             fun("KUBERNETES_SERVICE_HOST") -> "::1"; ("KUBERNETES_SERVICE_PORT") -> "443"; (_) -> false end))].

enabled_test_() ->
    %% Out of a pod: no service account directory, no api_url.
    Out = #{name => <<"web">>, service_account_dir => <<"/nonexistent">>},
    Env = fun(_) -> false end,
    P = fun(O) -> cluster_topology_config:parse(O, Env) end,
    [?_assertMatch({ignore, <<"not in a Kubernetes pod", _/binary>>}, P(Out)),
     ?_assertMatch({ignore, _}, P(Out#{enabled => auto})),
     %% true: today's strict behaviour, the missing setting named
     ?_assertMatch({error, <<"namespace is not set", _/binary>>}, P(Out#{enabled => true})),
     ?_assertMatch({ignore, <<"enabled is false">>}, P(Out#{enabled => false, namespace => <<"a">>,
         api_url => <<"https://h">>, token_file => <<"/t">>, ca_file => <<"/c">>})),
     %% an api_url given: the client is meant to run, so what is missing is an error
     ?_assertMatch({error, <<"no credentials", _/binary>>}, P(Out#{namespace => <<"a">>, api_url => <<"https://h">>})),
     %% a wrong option or a missing name is an error even where the client would not run
     ?_assertMatch({error, <<"unknown options", _/binary>>}, P(Out#{colour => red})),
     ?_assertMatch({error, <<"name ", _/binary>>}, P(maps:remove(name, Out))),
     ?_assertMatch({error, <<"enabled has an unusable value", _/binary>>}, P(Out#{enabled => yes}))].

enabled_start_link_test() ->
    %% The default service account directory does not exist where these tests run.
    false = filelib:is_dir("/var/run/secrets/kubernetes.io/serviceaccount"),
    false = os:getenv("KUBERNETES_SERVICE_HOST"),
    Log = ct_log:start(),
    ?assertEqual(ignore, cluster_topology:start_link([{name, "web"}])),
    Lines = [T || {_, T} <- ct_log:stop(Log)],
    %% One line, saying why and how to turn it on.
    ?assertMatch([<<"cluster_topology: not started: not in a Kubernetes pod", _/binary>>], Lines),
    [Line] = Lines,
    ?assertNotEqual(nomatch, binary:match(Line, <<"enabled => true">>)),
    ?assertNotEqual(nomatch, binary:match(Line, <<"api_url">>)),
    ?assertEqual(ignore, cluster_topology:start_link(#{name => <<"web">>, enabled => false})),
    ?assertMatch({error, {bad_options, <<"namespace is not set", _/binary>>}},
        cluster_topology:start_link(#{name => <<"web">>, enabled => true})).

in_pod_config_test() ->
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"), "ct-sa-" ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    [ok = file:write_file(filename:join(Dir, F), C) || {F, C} <- [{"token", "t"}, {"ca.crt", "c"}, {"namespace", "ns1\n"}]],
    Env = fun("KUBERNETES_SERVICE_HOST") -> "10.0.0.1"; ("KUBERNETES_SERVICE_PORT") -> "443"; ("HOSTNAME") -> "web-0"; (_) -> false end,
    {ok, C} = cluster_topology_config:parse(#{name => "web", service_account_dir => Dir}, Env),
    ?assertEqual(<<"ns1">>, maps:get(namespace, C)),
    ?assertEqual(<<"web-0">>, maps:get(pod_name, C)),
    ?assertEqual(list_to_binary(filename:join(Dir, "token")), maps:get(token_file, C)),
    ?assertEqual(list_to_binary(filename:join(Dir, "ca.crt")), maps:get(ca_file, C)),
    ?assertMatch(#{host := "10.0.0.1", port := 443, tls := true}, maps:get(api, C)).

backoff_delay_test() ->
    B = fun(A, U) -> cluster_topology_backoff:delay(A, 100, 1000, U) end,
    Lo = fun(_) -> 1 end,
    Hi = fun(N) -> N end,
    ?assertEqual({50, 100}, {B(0, Lo), B(0, Hi)}),
    ?assertEqual({200, 400}, {B(2, Lo), B(2, Hi)}),
    ?assertEqual({500, 1000}, {B(10, Lo), B(10, Hi)}),
    ?assertEqual({500, 1000}, {B(1000, Lo), B(1000, Hi)}),
    [?assert(X >= 500 andalso X =< 1000) || X <- [B(20, fun rand:uniform/1) || _ <- lists:seq(1, 100)]].

%% The delays of retries after `Causes', one a second (a clock in ms), each at its ceiling.
delays(Causes) ->
    {Ds, _, _} = lists:foldl(fun(Cause, {Acc, B, T}) ->
        {D, B1} = cluster_topology_backoff:next(B, Cause, T, fun(N) -> N end),
        {[D | Acc], B1, T + 1000}
    end, {[], cluster_topology_backoff:new(500, 30000), 0}, Causes),
    lists:reverse(Ds).

backoff_grows_to_its_cap_test() ->
    ?assertEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000], delays(lists:duplicate(8, broken))).

backoff_starts_over_after_a_healthy_period_test() ->
    {D1, B1} = cluster_topology_backoff:next(cluster_topology_backoff:new(500, 30000), gone, 0, fun(N) -> N end),
    {D2, B2} = cluster_topology_backoff:next(B1, gone, 1000, fun(N) -> N end),
    {D3, B3} = cluster_topology_backoff:next(B2, gone, 1000 + 120000, fun(N) -> N end),
    {D4, _} = cluster_topology_backoff:next(B3, gone, 1000 + 120000 + 120001, fun(N) -> N end),
    ?assertEqual([500, 1000, 2000, 500], [D1, D2, D3, D4]).

backoff_quick_retry_after_a_transport_failure_test_() ->
    %% A restarted API server answers 403 until its authorization caches synced: the first 403
    %% after a transport failure starts the attempts over; a 403 after anything else does not.
    [?_assertEqual([500, 1000, 2000, 4000, 500, 1000, 2000], delays([unreachable, unreachable, unreachable, unreachable,
         forbidden, forbidden, forbidden])),
     ?_assertEqual([500, 1000, 500], delays([broken, idle, forbidden])),
     ?_assertEqual([500, 1000, 2000], delays([api_error, api_error, forbidden])),
     ?_assertEqual([500, 1000, 2000], delays([unreachable, unreachable, unauthorized]))].

%% --- HTTP ------------------------------------------------------------------------------------

%% A one-shot server on loopback that answers with Reply (sent in pieces) and closes.
serve(Replies) ->
    {ok, L} = gen_tcp:listen(0, [binary, {active, false}, {ip, {127, 0, 0, 1}}, {reuseaddr, true}]),
    {ok, Port} = inet:port(L),
    spawn_link(fun() ->
        {ok, S} = gen_tcp:accept(L),
        {ok, _Req} = gen_tcp:recv(S, 0, 5000),
        [begin ok = gen_tcp:send(S, R), timer:sleep(5) end || R <- Replies],
        gen_tcp:close(S),
        gen_tcp:close(L)
    end),
    #{host => "127.0.0.1", port => Port, tls => false, max_body => 64, recv_timeout => 5000}.

http_get_test() ->
    C = serve([<<"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n">>, <<"{}">>]),
    ?assertMatch({ok, 200, _, <<"{}">>}, cluster_topology_http:get(C, <<"/x">>, [])).

http_get_too_large_test() ->
    C = serve([<<"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n">>]),
    ?assertMatch({error, {body_too_large, 100, 64}}, cluster_topology_http:get(C, <<"/x">>, [])).

http_chunked_too_large_test() ->
    C = serve([<<"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n">>,
        <<"28\r\n", (binary:copy(<<"a">>, 40))/binary, "\r\n">>, <<"28\r\n", (binary:copy(<<"a">>, 40))/binary, "\r\n0\r\n\r\n">>]),
    ?assertMatch({error, {body_too_large, 64}}, cluster_topology_http:get(C, <<"/x">>, [])).

http_watch_lines_across_chunks_test() ->
    C = serve([<<"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n">>,
        <<"5\r\n{\"a\":\r\n">>, <<"4\r\n1}\n{\r\n">>, <<"5\r\n}\n\n[]\r\n">>, <<"1\r\n\n\r\n0\r\n\r\n">>]),
    {ok, W} = cluster_topology_http:watch_open(C, <<"/w">>, []),
    {line, <<"{\"a\":1}">>, W1} = cluster_topology_http:watch_next(W),
    {line, <<"{}">>, W2} = cluster_topology_http:watch_next(W1),
    {line, <<>>, W3} = cluster_topology_http:watch_next(W2),
    {line, <<"[]">>, W4} = cluster_topology_http:watch_next(W3),
    ?assertEqual(done, cluster_topology_http:watch_next(W4)).

http_watch_event_too_large_test() ->
    C = serve([<<"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n">>,
        <<"3c\r\n", (binary:copy(<<"a">>, 60))/binary, "\r\n">>, <<"3c\r\n", (binary:copy(<<"a">>, 60))/binary, "\r\n">>]),
    {ok, W} = cluster_topology_http:watch_open(C, <<"/w">>, []),
    ?assertMatch({error, {event_too_large, 64}}, cluster_topology_http:watch_next(W)).

http_watch_refused_test() ->
    C = serve([<<"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\n{}">>]),
    ?assertMatch({status, 403, <<"{}">>}, cluster_topology_http:watch_open(C, <<"/w">>, [])).

%% --- TLS: the API server's certificate is verified, host name or IP included ----------------

openssl(Dir, Args) ->
    Cmd = "cd '" ++ Dir ++ "' && openssl " ++ Args ++ " >/dev/null 2>&1 && echo ok",
    "ok\n" = os:cmd(Cmd).

make_certs(Dir) ->
    openssl(Dir, "req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ca -keyout ca.key -out ca.crt"),
    openssl(Dir, "req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other -keyout other.key -out other.crt"),
    [begin
         openssl(Dir, "req -newkey rsa:2048 -nodes -subj /CN=x -keyout " ++ F ++ ".key -out " ++ F ++ ".csr"),
         ok = file:write_file(filename:join(Dir, F ++ ".ext"), "subjectAltName=" ++ San ++ "\n"),
         openssl(Dir, "x509 -req -in " ++ F ++ ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "
             ++ F ++ ".ext -out " ++ F ++ ".crt")
     end || {F, San} <- [{"ip", "IP:127.0.0.1"}, {"dns", "DNS:localhost"}, {"wrong", "DNS:example.com,IP:10.9.9.9"}]],
    ok.

tls_handshake(Dir, ServerCert, Host, CA) ->
    F = fun(N) -> filename:join(Dir, N) end,
    {ok, L} = ssl:listen(0, [{certfile, F(ServerCert ++ ".crt")}, {keyfile, F(ServerCert ++ ".key")},
        {reuseaddr, true}, binary, {active, false}, {ip, {127, 0, 0, 1}}]),
    {ok, {_, Port}} = ssl:sockname(L),
    spawn(fun() ->
        {ok, S} = ssl:transport_accept(L, 5000),
        _ = ssl:handshake(S, 5000),
        timer:sleep(200),
        ssl:close(L)
    end),
    Opts = cluster_topology_http:ssl_options(#{host => Host, ca_file => F(CA)}),
    case ssl:connect(Host, Port, [binary, {active, false} | Opts], 5000) of
        {ok, S} -> ssl:close(S), ok;
        {error, E} -> {error, E}
    end.

%% Why the client's TLS handshake failed: hostname_check_failed when OTP names that problem in
%% the alert it sent (OTP 25 sends handshake_failure, 27 and later bad_certificate), otherwise the
%% alert itself.
tls_refusal({error, {tls_alert, {Alert, Description}}} = E) ->
    case {lists:member(Alert, [handshake_failure, bad_certificate]), string:find(Description, "hostname_check_failed")} of
        {true, Found} when Found =/= nomatch -> hostname_check_failed;
        {true, _} -> E;
        {false, _} -> Alert
    end;
tls_refusal(Other) ->
    Other.

tls_verification_test_() ->
    {setup,
        fun() ->
            {ok, _} = application:ensure_all_started(ssl),
            logger:set_module_level([ssl_handshake, ssl_alert, tls_connection, ssl_connection, tls_server_connection,
                tls_client_connection, ssl_gen_statem], none),
            Dir = filename:join(os:getenv("TMPDIR", "/tmp"), "ct-tls-" ++ integer_to_list(erlang:unique_integer([positive]))),
            ok = filelib:ensure_dir(filename:join(Dir, "x")),
            make_certs(Dir),
            Dir
        end,
        fun(Dir) ->
            [?_assertEqual(ok, tls_handshake(Dir, "ip", "127.0.0.1", "ca.crt")),
             ?_assertEqual(ok, tls_handshake(Dir, "dns", "localhost", "ca.crt")),
             %% the certificate does not name the host: the client refuses it for that reason
             ?_assertEqual(hostname_check_failed, tls_refusal(tls_handshake(Dir, "wrong", "127.0.0.1", "ca.crt"))),
             ?_assertEqual(hostname_check_failed, tls_refusal(tls_handshake(Dir, "dns", "127.0.0.1", "ca.crt"))),
             ?_assertEqual(hostname_check_failed, tls_refusal(tls_handshake(Dir, "ip", "localhost", "ca.crt"))),
             %% a certificate of another CA
             ?_assertEqual(unknown_ca, tls_refusal(tls_handshake(Dir, "ip", "127.0.0.1", "other.crt")))]
        end}.
