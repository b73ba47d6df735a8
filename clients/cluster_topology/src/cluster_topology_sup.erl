%% @doc The client's own supervisor: what `cluster_topology:start_link/1' starts and a user's
%% supervisor holds. Its children, in start order:
%%
%%   server           the round server (`cluster_topology', registered as the `register' option)
%%   topology_reader  follows the ClusterTopology (`cluster_topology_reader')
%%   lease_reader     follows the operator's Lease (only with `lease => true')
%%   report           writes this member's report (`cluster_topology_report'; only with
%%                    `report => true'): last, so that it finds the server and a crash of it
%%                    touches nothing else
%%
%% `rest_for_one': a reader that crashes is started again on its own (it reads its object again
%% and the server keeps what it knows: the peers it connected, the last good list); a server
%% that crashes takes the readers with it, so that they tell the new server everything again.
%% More than ?INTENSITY restarts within ?PERIOD seconds stop the client, and its user's
%% supervisor decides.
-module(cluster_topology_sup).
-behaviour(supervisor).

-export([start_link/1, server/1, init/1]).

-define(INTENSITY, 5).
-define(PERIOD, 30).

%% @doc Starts the supervisor (not registered: several clients may run in one VM).
-spec start_link(cluster_topology_config:config()) -> {ok, pid()} | {error, term()}.
start_link(Conf) ->
    supervisor:start_link(?MODULE, Conf).

%% @doc The round server under supervisor `Sup' (the readers tell it what they read).
-spec server(pid()) -> pid() | undefined.
server(Sup) ->
    case lists:keyfind(server, 1, supervisor:which_children(Sup)) of
        {server, Pid, _, _} when is_pid(Pid) -> Pid;
        _ -> undefined
    end.

%% @private
-spec init(cluster_topology_config:config()) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init(Conf) ->
    Sup = self(),
    Server = #{id => server, start => {cluster_topology, start_server, [Sup, Conf]},
        restart => permanent, shutdown => 5000, type => worker, modules => [cluster_topology]},
    Reader = fun(Kind, Id) ->
        #{id => Id,
          start => {cluster_topology_reader, start_link, [Kind, Conf, {sup, Sup}]},
          restart => permanent, shutdown => 2000, type => worker, modules => [cluster_topology_reader]}
    end,
    Readers =
        case maps:get(lease, Conf) of
            true -> [Reader(topology, topology_reader), Reader(lease, lease_reader)];
            false -> [Reader(topology, topology_reader)]
        end,
    Report =
        case maps:get(report, Conf) of
            true -> [#{id => report, start => {cluster_topology_report, start_link, [Sup, Conf]},
                       restart => permanent, shutdown => 2000, type => worker, modules => [cluster_topology_report]}];
            false -> []
        end,
    {ok, {#{strategy => rest_for_one, intensity => ?INTENSITY, period => ?PERIOD}, [Server | Readers] ++ Report}}.
