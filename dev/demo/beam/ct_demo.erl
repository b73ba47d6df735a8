%% The demo's BEAM nodes: each starts the cluster_topology client under a supervisor of its own,
%% as an application does, and writes a summary of what its client reports when asked.
%%
%%   ct_demo:start()        options from the JSON file named by CT_DEMO_CONFIG
%%   ct_demo:report(File)   writes the summary of cluster_topology:state() to File
-module(ct_demo).
-behaviour(supervisor).

-export([start/0, report/1, init/1]).

start() ->
    {ok, _} = application:ensure_all_started(cluster_topology),
    {ok, Json} = file:read_file(os:getenv("CT_DEMO_CONFIG")),
    {ok, Raw} = cluster_topology_json:decode(Json),
    %% The demo's own file: its keys are the client's option names.
    Opts = maps:from_list([{binary_to_atom(K, utf8), V} || {K, V} <- maps:to_list(Raw)]),
    {ok, Sup} = supervisor:start_link({local, ct_demo_sup}, ?MODULE, Opts),
    unlink(Sup),
    ok.

init(Opts) ->
    {ok, {#{strategy => one_for_one, intensity => 10, period => 10}, [cluster_topology:child_spec(Opts)]}}.

report(File) ->
    S = cluster_topology:state(),
    Peers = maps:get(peers, S),
    Others = [P || #{node := N} = P <- Peers, N =/= maps:get(self, S)],
    Connected = [N || #{node := N, connected := true} <- Others],
    Lines = [
        io_lib:format("  ~s (pod ~s), its client reports:~n", [maps:get(self, S), maps:get(pod, S)]),
        io_lib:format("    peers listed ~b, connected ~b: ~s~n",
            [length(Peers), length(Connected), lists:join(", ", Connected)]),
        io_lib:format("    self check: ~s~n", [self_check(maps:get(self_check, S))]),
        io_lib:format("    operator liveness: ~s (~s)~n",
            [maps:get(value, maps:get(liveness, S)), maps:get(reason, maps:get(liveness, S))]),
        io_lib:format("    trouble: ~s~n", [trouble(maps:get(trouble, S))]),
        io_lib:format("    last round: ~s~n", [last_round(maps:get(last_round, S))])
    ],
    ok = file:write_file(File, Lines).

self_check(#{ok := true, node := N}) -> ["ok (the operator computed ", N, ")"];
self_check(#{ok := Ok, problem := P}) -> io_lib:format("~s: ~s", [Ok, P]);
self_check(#{ok := Ok}) -> atom_to_list(Ok).

trouble(undefined) -> "none";
trouble(#{cause := C, detail := D}) -> io_lib:format("~s: ~s", [C, D]).

last_round(undefined) -> "none yet";
last_round(#{connected := C, failed_connects := F, disconnected := D, called := Called}) ->
    io_lib:format("connect_node called for ~b, ~b connected, ~b failed, ~b disconnected",
        [length(Called), length(C), length(F), length(D)]).
