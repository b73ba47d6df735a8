%% @doc When a reader tries the API again, as pure functions (the clock and the random numbers
%% are the caller's, so a test drives them).
%%
%% Every retry waits a capped, jittered, exponentially growing delay (docs/status-protocol.md
%% §1.4): attempt N waits a random time in [D/2, D], D = min(Max, Min * 2^N). The way
%% client-go's backoff manager does it, the attempts start over once no retry was needed for a
%% healthy period (`?HEALTHY_MS'), so a server that accepts requests and then breaks them is
%% asked less and less often, while a rare failure is retried soon.
%%
%% One more rule: a 403 right after the API could not be reached is what a restarted API server
%% answers until its authorization caches have synced, so the attempts start over there too
%% (the first 403 after a transport failure is retried within `Min').
-module(cluster_topology_backoff).

-export([new/2, next/4, delay/4]).
-export_type([backoff/0, cause/0]).

-define(HEALTHY_MS, 120000).

%% What went wrong before a retry: the API unreachable (`unreachable'), a watch stream broken
%% or silent (`broken', `idle') are transport failures; the others are answers of the server.
-type cause() ::
    unreachable | broken | idle | closed_early | gone |
    unauthorized | forbidden | api_error | malformed.

-opaque backoff() :: #{
    min := pos_integer(),
    max := pos_integer(),
    attempt := non_neg_integer(),
    last_at := integer() | undefined,
    last_cause := cause() | undefined
}.

-type uniform() :: fun((pos_integer()) -> pos_integer()).

%% @doc A backoff with no retry yet: delays from `Min' (jittered) up to `Max' milliseconds.
-spec new(pos_integer(), pos_integer()) -> backoff().
new(Min, Max) when Min =< Max ->
    #{min => Min, max => Max, attempt => 0, last_at => undefined, last_cause => undefined}.

%% @doc The delay before the retry after a failure of `Cause' at `NowMs' (a monotonic clock),
%% and the backoff for the retry after it. `Uniform(N)' picks an integer in 1..N.
-spec next(backoff(), cause(), integer(), uniform()) -> {non_neg_integer(), backoff()}.
next(#{min := Min, max := Max, attempt := A0, last_at := Last, last_cause := LastCause} = B, Cause, NowMs, Uniform) ->
    A =
        case Last =:= undefined orelse NowMs - Last > ?HEALTHY_MS orelse restarted_server(LastCause, Cause) of
            true -> 0;
            false -> A0
        end,
    {delay(A, Min, Max, Uniform), B#{attempt := A + 1, last_at := NowMs, last_cause := Cause}}.

restarted_server(Before, forbidden) -> transport(Before);
restarted_server(_, _) -> false.

transport(unreachable) -> true;
transport(broken) -> true;
transport(idle) -> true;
transport(_) -> false.

%% @doc The delay of attempt `Attempt' (0 first): in [D/2, D], D = min(Max, Min * 2^Attempt).
-spec delay(non_neg_integer(), pos_integer(), pos_integer(), uniform()) -> non_neg_integer().
delay(Attempt, Min, Max, Uniform) ->
    D = min(Max, Min bsl min(Attempt, 30)),
    Half = max(1, D div 2),
    D - Half + Uniform(Half + 1) - 1.
