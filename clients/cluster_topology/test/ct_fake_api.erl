%% A fake Kubernetes API server on loopback for the unit tests' odd wire behaviour (a watch that
%% closes at once, a broken stream, a 410, a request that never gets an answer). It is never the
%% proof of a guarantee towards the real API server: the end-to-end tests are.
%%
%% start(Handler) listens on 127.0.0.1 (a free port) and answers each request (one per
%% connection, as the library makes them) with Handler(Kind, Path), Kind get | watch:
%%
%%   {reply, Status, Body}           a whole answer
%%   {stream, [Chunk], close}        a 200 chunked stream, then its end (a clean close)
%%   {stream, [Chunk], break}        a 200 chunked stream, then the socket closed mid-stream
%%   {stream, [Chunk], hang}         a 200 chunked stream that then stays silent
%%   hang                            no answer at all
%%   drop                            the connection closed without an answer
%%
%% Every request is told to the test process as {fake_api, Kind, Path}.
-module(ct_fake_api).

-export([start/1, stop/1, url/1, object/2, topology/2, lease/2, event/2]).

start(Handler) ->
    Test = self(),
    Owner = spawn(fun() ->
        {ok, L} = gen_tcp:listen(0, [binary, {active, false}, {ip, {127, 0, 0, 1}}, {reuseaddr, true}]),
        {ok, Port} = inet:port(L),
        Test ! {fake_api_port, self(), Port},
        Acceptor = spawn_link(fun() -> accept(L, Handler, Test) end),
        receive stop -> exit(Acceptor, kill), gen_tcp:close(L) end
    end),
    receive {fake_api_port, Owner, Port} -> {Owner, Port} end.

stop({Owner, _}) -> Owner ! stop, ok.

url({_, Port}) -> <<"http://127.0.0.1:", (integer_to_binary(Port))/binary>>.

accept(L, Handler, Test) ->
    {ok, S} = gen_tcp:accept(L),
    Pid = spawn(fun() -> receive go -> serve(S, Handler, Test) end end),
    ok = gen_tcp:controlling_process(S, Pid),
    Pid ! go,
    accept(L, Handler, Test).

serve(S, Handler, Test) ->
    case read_head(S, <<>>) of
        {ok, Path} ->
            Kind = case binary:match(Path, <<"watch=true">>) of nomatch -> get; _ -> watch end,
            Test ! {fake_api, Kind, Path},
            answer(S, Handler(Kind, Path));
        error ->
            gen_tcp:close(S)
    end.

read_head(S, Acc) ->
    case binary:match(Acc, <<"\r\n\r\n">>) of
        nomatch ->
            case gen_tcp:recv(S, 0, 5000) of
                {ok, D} -> read_head(S, <<Acc/binary, D/binary>>);
                _ -> error
            end;
        _ ->
            [Line | _] = binary:split(Acc, <<"\r\n">>),
            [_, Path | _] = binary:split(Line, <<" ">>, [global]),
            {ok, Path}
    end.

answer(S, {reply, Status, Body}) ->
    B = iolist_to_binary(Body),
    gen_tcp:send(S, [<<"HTTP/1.1 ">>, integer_to_binary(Status), <<" X\r\nContent-Type: application/json\r\nContent-Length: ">>,
        integer_to_binary(byte_size(B)), <<"\r\n\r\n">>, B]),
    gen_tcp:close(S);
answer(S, {stream, Chunks, Then}) ->
    gen_tcp:send(S, <<"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n">>),
    [gen_tcp:send(S, chunk(C)) || C <- Chunks],
    case Then of
        close -> gen_tcp:send(S, <<"0\r\n\r\n">>), gen_tcp:close(S);
        break -> gen_tcp:send(S, <<"10\r\n{\"type\":">>), gen_tcp:close(S);
        hang -> hang(S)
    end;
answer(S, hang) ->
    hang(S);
answer(S, drop) ->
    gen_tcp:close(S).

hang(S) ->
    receive after infinity -> gen_tcp:close(S) end.

chunk(C) ->
    B = iolist_to_binary(C),
    [integer_to_binary(byte_size(B), 16), <<"\r\n">>, B, <<"\r\n">>].

%% A Kubernetes object's JSON: `object(RV, Fields)'.
object(RV, Fields) ->
    json(Fields#{<<"metadata">> => #{<<"resourceVersion">> => RV}}).

%% A ClusterTopology with a current status listing `Nodes'.
topology(RV, Nodes) ->
    object(RV, #{<<"status">> => #{<<"lastResponse">> => #{<<"code">> => <<"200">>},
        <<"peers">> => [#{<<"nodeName">> => N, <<"pod">> => hd(binary:split(N, <<"@">>))} || N <- Nodes]}}).

%% The operator's Lease, renewed `AgoS' seconds ago with a staleness limit of `LimitS' seconds.
lease(AgoS, LimitS) ->
    Renew = calendar:system_time_to_rfc3339(erlang:system_time(second) - AgoS, [{offset, "Z"}, {unit, second}]),
    object(<<"1">>, #{<<"spec">> => #{<<"renewTime">> => list_to_binary(Renew), <<"leaseDurationSeconds">> => LimitS}}).

%% A watch event line.
event(Type, ObjectJson) ->
    [<<"{\"type\":\"">>, Type, <<"\",\"object\":">>, ObjectJson, <<"}\n">>].

%% A small JSON encoder for the fixtures (maps, lists, binaries, integers, booleans).
json(M) when is_map(M) -> [${, lists:join($,, [[json(K), $:, json(V)] || {K, V} <- maps:to_list(M)]), $}];
json(L) when is_list(L) -> [$[, lists:join($,, [json(X) || X <- L]), $]];
json(B) when is_binary(B) -> [$", B, $"];
json(true) -> <<"true">>;
json(false) -> <<"false">>;
json(I) when is_integer(I) -> integer_to_binary(I).
