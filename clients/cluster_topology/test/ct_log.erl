%% Captures what is logged through `logger' while a test runs: start/0 adds a handler that
%% sends every event, formatted, to the calling process; stop/1 removes it and returns the
%% events, oldest first, as {Level, Text}.
-module(ct_log).

-export([start/0, stop/1, log/2]).

start() ->
    Id = list_to_atom("ct_log_" ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = logger:add_handler(Id, ?MODULE, #{config => #{pid => self(), id => Id}}),
    Id.

stop(Id) ->
    ok = logger:remove_handler(Id),
    collect(Id, []).

collect(Id, Acc) ->
    receive {ct_log, Id, Level, Text} -> collect(Id, [{Level, Text} | Acc])
    after 0 -> lists:reverse(Acc)
    end.

%% logger handler callback
log(#{level := Level, msg := Msg} = Event, #{config := #{pid := Pid, id := Id}}) ->
    Text =
        case Msg of
            {string, S} -> unicode:characters_to_binary(S);
            {report, R} -> iolist_to_binary(io_lib:format("~0p", [R]));
            {Format, Args} -> iolist_to_binary(io_lib:format(Format, Args))
        end,
    _ = Event,
    Pid ! {ct_log, Id, Level, Text},
    ok.
