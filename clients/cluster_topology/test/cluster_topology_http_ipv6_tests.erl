%% The HTTP client against a server on the IPv6 loopback: the address is connected in its family,
%% with and without TLS, and the Host header carries it in brackets. (The end-to-end proof against
%% a real API server on [::1] is test/e2e/ipv6/ in the repository.)
-module(cluster_topology_http_ipv6_tests).

-include_lib("eunit/include/eunit.hrl").

-define(LOOPBACK6, {0, 0, 0, 0, 0, 0, 0, 1}).

%% A one-shot server on [::1] that sends the request it got to the test process, then answers.
serve6(Listen, Accept) ->
    {ok, L} = Listen([binary, {active, false}, {ip, ?LOOPBACK6}, {reuseaddr, true}]),
    Me = self(),
    spawn_link(fun() ->
        {ok, S, Recv, Send, Close} = Accept(L),
        {ok, Req} = Recv(S),
        Me ! {request, Req},
        ok = Send(S, <<"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}">>),
        timer:sleep(100),
        Close(S),
        Close(L)
    end),
    L.

host_header(Req) ->
    [Line] = [L || L <- binary:split(Req, <<"\r\n">>, [global]), binary:match(L, <<"Host: ">>) =:= {0, 6}],
    Line.

plain_get_test() ->
    L = serve6(fun(O) -> gen_tcp:listen(0, O) end, fun(L) ->
        {ok, S} = gen_tcp:accept(L, 5000),
        {ok, S, fun(X) -> gen_tcp:recv(X, 0, 5000) end, fun gen_tcp:send/2, fun gen_tcp:close/1}
    end),
    {ok, Port} = inet:port(L),
    C = #{host => "::1", port => Port, tls => false, recv_timeout => 5000},
    ?assertMatch({ok, 200, _, <<"{}">>}, cluster_topology_http:get(C, <<"/x">>, [])),
    Req = receive {request, R} -> R after 5000 -> timeout end,
    ?assertEqual(iolist_to_binary(["Host: [::1]:", integer_to_list(Port)]), host_header(Req)).

tls_get_test_() ->
    {setup,
        fun() ->
            {ok, _} = application:ensure_all_started(ssl),
            Dir = filename:join(os:getenv("TMPDIR", "/tmp"), "ct-tls6-" ++ integer_to_list(erlang:unique_integer([positive]))),
            ok = filelib:ensure_dir(filename:join(Dir, "x")),
            Sh = fun(Args) -> "ok\n" = os:cmd("cd '" ++ Dir ++ "' && openssl " ++ Args ++ " >/dev/null 2>&1 && echo ok") end,
            Sh("req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ca -keyout ca.key -out ca.crt"),
            Sh("req -newkey rsa:2048 -nodes -subj /CN=x -keyout s.key -out s.csr"),
            ok = file:write_file(filename:join(Dir, "s.ext"), "subjectAltName=IP:::1\n"),
            Sh("x509 -req -in s.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile s.ext -out s.crt"),
            Dir
        end,
        fun(Dir) ->
            F = fun(N) -> filename:join(Dir, N) end,
            L = serve6(fun(O) -> ssl:listen(0, [{certfile, F("s.crt")}, {keyfile, F("s.key")} | O]) end, fun(L) ->
                {ok, T} = ssl:transport_accept(L, 5000),
                {ok, S} = ssl:handshake(T, 5000),
                {ok, S, fun(X) -> ssl:recv(X, 0, 5000) end, fun ssl:send/2, fun ssl:close/1}
            end),
            {ok, {_, Port}} = ssl:sockname(L),
            Ssl = cluster_topology_http:ssl_options(#{host => "::1", ca_file => F("ca.crt")}),
            C = #{host => "::1", port => Port, tls => true, ssl => Ssl, recv_timeout => 5000},
            Got = cluster_topology_http:get(C, <<"/x">>, []),
            Req = receive {request, R} -> R after 5000 -> timeout end,
            [?_assertMatch({ok, 200, _, <<"{}">>}, Got),
             ?_assertEqual(iolist_to_binary(["Host: [::1]:", integer_to_list(Port)]), host_header(Req))]
        end}.
