%% The reader (a gen_statem) against a fake API server on loopback (ct_fake_api), with its
%% backoff driven by a controlled clock and controlled random numbers: every retry's delay is
%% the one the backoff decided, told to the test as {retry, Cause, DelayMs}.
-module(cluster_topology_reader_tests).
-include_lib("eunit/include/eunit.hrl").

-define(MIN, 8).
-define(MAX, 64).
-define(HEALTHY_MS, 120000).

%% --- helpers ---------------------------------------------------------------------------------

tmp(Name) ->
    filename:join(os:getenv("TMPDIR", "/tmp"), Name ++ "-" ++ integer_to_list(erlang:unique_integer([positive]))).

conf(Api, Extra) ->
    Token = tmp("ct-token"),
    ok = file:write_file(Token, <<"t0ken\n">>),
    {ok, C} = cluster_topology_config:parse(maps:merge(#{name => <<"web">>, namespace => <<"app">>,
        api_url => ct_fake_api:url(Api), token_file => Token, lease => false,
        backoff_min_ms => ?MIN, backoff_max_ms => ?MAX}, Extra), fun(_) -> false end),
    C.

%% A clock that moves only when the test moves it.
clock() ->
    C = counters:new(1, []),
    counters:put(C, 1, 1000000),
    {fun() -> counters:get(C, 1) end, fun(Ms) -> counters:add(C, 1, Ms) end}.

%% Uniform(N) = N: each delay is its ceiling, min(MAX, MIN * 2^attempt).
start(Api, Now) ->
    {ok, R} = cluster_topology_reader:start_link(topology, conf(Api, #{}), self(), #{now => Now, uniform => fun(N) -> N end}),
    R.

stop(R, Api) ->
    unlink(R),
    exit(R, kill),
    ct_fake_api:stop(Api),
    flush().

%% Runs Test(Advance) with a reader of the fake API answering with Handler; the reader and the
%% fake API are stopped whatever happens (so that a failed test leaves nothing to the next).
with(Handler, Test) ->
    Api = ct_fake_api:start(Handler),
    {Now, Advance} = clock(),
    R = start(Api, Now),
    try Test(R, Advance) after stop(R, Api) end.

flush() ->
    receive _ -> flush() after 0 -> ok end.

%% The next N retries the reader told, {Cause, DelayMs}, waiting at most 3 s in all (eunit
%% gives a test 5 s); `timeout' for each that did not come.
retries(N) ->
    Deadline = erlang:monotonic_time(millisecond) + 3000,
    [receive {cluster_topology_read, topology, {retry, Cause, D}} -> {Cause, D}
     after max(0, Deadline - erlang:monotonic_time(millisecond)) -> timeout
     end || _ <- lists:seq(1, N)].

%% The next N requests the fake API answered: get | {watch, ResourceVersion}.
requests(N) ->
    Deadline = erlang:monotonic_time(millisecond) + 3000,
    [receive
         {fake_api, get, _} -> get;
         {fake_api, watch, P} ->
             case re:run(P, "resourceVersion=([0-9]+)", [{capture, all_but_first, binary}]) of
                 {match, [RV]} -> {watch, RV};
                 nomatch -> {watch, none}
             end
     after max(0, Deadline - erlang:monotonic_time(millisecond)) -> timeout
     end || _ <- lists:seq(1, N)].

topology() -> ct_fake_api:topology(<<"5">>, [<<"a@h">>]).

%% --- backoff on every reconnect ----------------------------------------------------------------

watch_closed_at_once_backs_off_test() ->
    %% A server that accepts every watch and closes it at once, without a word.
    with(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> {stream, [], close} end, fun(_, Advance) ->
        ?assertEqual([{closed_early, 8}, {closed_early, 16}, {closed_early, 32}, {closed_early, 64}, {closed_early, 64}],
            retries(5)),
        %% Each retry watches again from the object's resourceVersion (no GET).
        ?assertEqual([get, {watch, <<"5">>}, {watch, <<"5">>}, {watch, <<"5">>}], requests(4)),
        %% After a healthy period, the attempts start over.
        Advance(?HEALTHY_MS + 1),
        ?assertMatch([{closed_early, ?MIN}], retries(1))
    end).

broken_stream_backs_off_test() ->
    %% Each watch is accepted, hears a bookmark, and then its connection breaks mid-event.
    Bookmark = ct_fake_api:event(<<"BOOKMARK">>, ct_fake_api:object(<<"9">>, #{})),
    with(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> {stream, [Bookmark], break} end, fun(_, _) ->
        ?assertEqual([{broken, 8}, {broken, 16}, {broken, 32}, {broken, 64}], retries(4)),
        %% It resumes from the bookmark's resourceVersion.
        ?assertEqual([get, {watch, <<"5">>}, {watch, <<"9">>}, {watch, <<"9">>}], requests(4))
    end).

idle_watch_backs_off_test() ->
    %% A watch that stays silent longer than idle_timeout_ms is given up and opened again.
    Api = ct_fake_api:start(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> {stream, [], hang} end),
    {Now, _} = clock(),
    {ok, R} = cluster_topology_reader:start_link(topology, conf(Api, #{idle_timeout_ms => 30}), self(),
        #{now => Now, uniform => fun(N) -> N end}),
    try
        ?assertEqual([{idle, 8}, {idle, 16}], retries(2)),
        ?assertEqual([get, {watch, <<"5">>}, {watch, <<"5">>}], requests(3))
    after
        stop(R, Api)
    end.

gone_reads_again_with_backoff_test_() ->
    %% 410 Gone, as the HTTP status of the watch and as an ERROR event in its stream: the object
    %% is read again (GET), after a backoff delay that grows.
    Gone = ct_fake_api:event(<<"ERROR">>, <<"{\"kind\":\"Status\",\"code\":410}">>),
    [{Name, fun() ->
        with(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> Answer end, fun(_, _) ->
            ?assertEqual([{gone, 8}, {gone, 16}, {gone, 32}], retries(3)),
            ?assertEqual([get, {watch, <<"5">>}, get, {watch, <<"5">>}, get, {watch, <<"5">>}], requests(6))
        end)
     end} || {Name, Answer} <- [{"410 status", {reply, 410, <<"{\"kind\":\"Status\",\"code\":410}">>}},
                                {"410 event", {stream, [Gone], hang}}]].

watch_that_ran_its_course_resumes_at_once_test() ->
    Bookmark = ct_fake_api:event(<<"BOOKMARK">>, ct_fake_api:object(<<"7">>, #{})),
    with(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> {stream, [Bookmark], close} end, fun(_, _) ->
        ?assertEqual([{closed, 0}, {closed, 0}], retries(2)),
        ?assertEqual([get, {watch, <<"5">>}, {watch, <<"7">>}], requests(3))
    end).

quick_retry_after_restart_test() ->
    %% The API cannot be reached three times (each connection dropped), then answers 403 (a
    %% restarted API server before its authorization caches synced): that first 403 is retried
    %% within backoff_min_ms, and the attempts grow again from there.
    N = counters:new(1, []),
    with(fun(get, _) ->
        counters:add(N, 1, 1),
        case counters:get(N, 1) of
            I when I =< 3 -> drop;
            _ -> {reply, 403, <<"{\"kind\":\"Status\",\"code\":403,\"message\":\"forbidden\"}">>}
        end
    end, fun(_, _) ->
        ?assertEqual([{unreachable, 8}, {unreachable, 16}, {unreachable, 32}, {forbidden, 8}, {forbidden, 16}], retries(5))
    end).

too_large_is_malformed_test() ->
    %% An answer beyond max_body_bytes is refused as malformed (not as an unreachable API).
    Big = ct_fake_api:object(<<"5">>, #{<<"status">> => #{<<"filler">> => binary:copy(<<"x">>, 4096)}}),
    Api = ct_fake_api:start(fun(get, _) -> {reply, 200, Big} end),
    {Now, _} = clock(),
    {ok, R} = cluster_topology_reader:start_link(topology, conf(Api, #{max_body_bytes => 1024}), self(),
        #{now => Now, uniform => fun(N) -> N end}),
    try
        ?assertEqual([{malformed, 8}, {malformed, 16}], retries(2)),
        receive {cluster_topology_read, topology, {trouble, Cause, Detail}} ->
            ?assertEqual({malformed, <<"{body_too_large,">>}, {Cause, binary:part(Detail, 0, 16)})
        after 0 -> error(no_trouble)
        end
    after
        stop(R, Api)
    end.

too_large_watch_event_is_malformed_test() ->
    %% A watch event beyond max_body_bytes (in one chunk, as the API server sends it): refused as
    %% malformed, and the object is read again (a GET), not watched again from the same place.
    Big = ct_fake_api:event(<<"MODIFIED">>, ct_fake_api:object(<<"6">>, #{<<"filler">> => binary:copy(<<"x">>, 4096)})),
    Api = ct_fake_api:start(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> {stream, [Big], hang} end),
    {Now, _} = clock(),
    {ok, R} = cluster_topology_reader:start_link(topology, conf(Api, #{max_body_bytes => 1024}), self(),
        #{now => Now, uniform => fun(N) -> N end}),
    try
        ?assertEqual([{malformed, 8}, {malformed, 16}], retries(2)),
        ?assertEqual([get, {watch, <<"5">>}, get, {watch, <<"5">>}], requests(4))
    after
        stop(R, Api)
    end.

%% --- the reader answers system messages whatever it waits for --------------------------------

sys_answers_while_a_request_hangs_test() ->
    with(fun(get, _) -> hang end, fun(R, _) ->
        [get] = requests(1),
        ?assertMatch({getting, _}, sys:get_state(R, 2000)),
        ?assertEqual(ok, sys:suspend(R, 2000)),
        ?assertEqual(ok, sys:resume(R, 2000))
    end).

sys_answers_while_watching_test() ->
    with(fun(get, _) -> {reply, 200, topology()}; (watch, _) -> {stream, [], hang} end, fun(R, _) ->
        [get, {watch, <<"5">>}] = requests(2),
        receive {cluster_topology_read, topology, {object, {current, #{peers := [_]}}, _, _}} -> ok
        after 5000 -> error(no_object)
        end,
        ?assertMatch({watching, _}, sys:get_state(R, 2000))
    end).
