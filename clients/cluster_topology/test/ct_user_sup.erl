%% A user's supervisor, as an application holds the client: empty until a test adds a child.
-module(ct_user_sup).
-behaviour(supervisor).

-export([init/1]).

init([]) -> {ok, {#{strategy => one_for_one, intensity => 1, period => 5}, []}}.
