%% @doc `:telemetry' events, when the `telemetry' library is there at run time. The client does
%% not depend on it: whether `telemetry:execute/3' exists is found out once, when the client
%% starts, and the call is made through `erlang:apply/3' with the module named at run time (so
%% that the library builds, and xref and dialyzer pass, without it). The events are listed in
%% README.md ("Telemetry").
-module(cluster_topology_telemetry).

-export([available/0, execute/4]).
-export_type([name/0]).

-type name() :: [atom(), ...].

%% @doc Whether `telemetry:execute/3' can be called in this VM.
-spec available() -> boolean().
available() ->
    code:ensure_loaded(telemetry) =:= {module, telemetry} andalso erlang:function_exported(telemetry, execute, 3).

%% @doc Emits an event when `On' (what `available/0' answered). A failure of telemetry itself
%% (its application not started) is returned, never raised: the caller decides what to do.
-spec execute(boolean(), name(), #{atom() => number()}, #{atom() => term()}) -> ok | {error, term()}.
execute(false, _, _, _) ->
    ok;
execute(true, Name, Measurements, Metadata) ->
    try erlang:apply(telemetry(), execute, [Name, Measurements, Metadata]) of
        _ -> ok
    catch
        Class:Reason -> {error, {Class, Reason}}
    end.

%% The module named at run time: a call written out to a module that is not there at build time
%% would make xref and dialyzer report an undefined function.
telemetry() -> list_to_existing_atom("telemetry").
