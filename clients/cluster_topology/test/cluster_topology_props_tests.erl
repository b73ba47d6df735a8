%% Property tests of the JSON decoder and of the node-name grammar, with PropEr when it is
%% installed (Debian: erlang-proper). Where it is not, they are skipped with a line saying so
%% (never failed). PropEr's functions are called directly instead of through proper.hrl's macros,
%% so this module compiles without PropEr (Debian ships proper.hrl in a separate -dev package).
-module(cluster_topology_props_tests).
-include_lib("eunit/include/eunit.hrl").

-define(RUNS, 400).

props_test_() ->
    case code:which(proper) of
        non_existing ->
            [skipped("PropEr is not installed (no proper in the code path; Debian: apt-get install erlang-proper); "
                "the property tests are skipped")];
        _ ->
            Props = [
                {"JSON: every generated document decodes to its value", fun prop_json_roundtrip/0},
                {"JSON: a cut document is refused", fun prop_json_cut_refused/0},
                {"JSON: a raw control character in a string is refused", fun prop_json_control_char_refused/0},
                {"JSON: the library's decoder agrees with OTP's json module", fun prop_json_agrees_with_otp/0},
                {"names: every name the grammar generates is accepted", fun prop_names_generated_accepted/0},
                {"names: the check agrees with a regular expression of the grammar", fun prop_names_agree_with_regex/0},
                {"names: a refused name never becomes an atom", fun prop_no_atom_for_a_refused_name/0}
            ],
            %% quiet: PropEr prints nothing; a failure shows its (shrunk) counterexample here.
            [case P() of
                 {skip, Why} -> skipped(Why);
                 Prop -> {Name, {timeout, 120, ?_assertEqual(true, proper:quickcheck(Prop, [{numtests, ?RUNS}, quiet, long_result]))}}
             end || {Name, P} <- Props]
    end.

%% A test that only says, where eunit's output is read, what was not tested and why.
skipped(Why) ->
    {"skipped: " ++ Why, fun() -> io:format(user, "~n*** cluster_topology_props_tests: SKIPPED: ~s~n", [Why]) end}.

%% --- PropEr without its macros ---------------------------------------------------------------

forall(Gen, Prop) -> proper:forall(Gen, Prop).
bind(Gen, F) -> proper_types:bind(Gen, F, false).
such_that(Gen, Cond) -> proper_types:add_constraint(Gen, Cond, true).
sized(F) -> proper_types:sized(F).
lazy(F) -> proper_types:lazy(F).
when_fail(Tell, Ok) -> proper:whenfail(Tell, fun() -> Ok end).

%% --- JSON --------------------------------------------------------------------------------------

%% A JSON value as the decoder gives it, with a text of it written by this test's encoder
%% (random spacing, and each character escaped or not at random): {Value, Text}.
json_doc() ->
    bind(sized(fun(S) -> json_value(S) end), fun(V) -> bind(encoding(V), fun(T) -> {V, T} end) end).

json_value(S) when S =< 1 -> scalar();
json_value(S) ->
    proper_types:frequency([
        {3, scalar()},
        {1, lazy(fun() -> proper_types:resize(S div 3, proper_types:list(json_value(S div 3))) end)},
        {1, lazy(fun() ->
            bind(proper_types:resize(S div 3, proper_types:list({json_string(), json_value(S div 3)})),
                fun(KVs) -> maps:from_list(KVs) end)
        end)}
    ]).

scalar() ->
    proper_types:oneof([
        proper_types:integer(),
        proper_types:integer(-(1 bsl 70), 1 bsl 70),
        such_that(proper_types:float(), fun(F) -> F == F end),
        proper_types:oneof([1.0e300, -2.5e-300, 0.0, 5.0e-324]),
        proper_types:elements([true, false, null]),
        json_string()
    ]).

%% Strings of code points from every range: ASCII (quote, backslash and controls included),
%% two and three bytes in UTF-8, and beyond the BMP (surrogate pairs when escaped).
json_string() ->
    bind(proper_types:list(proper_types:frequency([
        {6, proper_types:integer(16#20, 16#7E)},
        {2, proper_types:integer(0, 16#1F)},
        {1, proper_types:elements([$", $\\, $/])},
        {1, proper_types:integer(16#80, 16#7FF)},
        {1, such_that(proper_types:integer(16#800, 16#FFFF), fun(C) -> C < 16#D800 orelse C > 16#DFFF end)},
        {1, proper_types:integer(16#10000, 16#10FFFF)}
    ])), fun(Cps) -> unicode:characters_to_binary(Cps) end).

%% A text of V: bits choose spacing and escapes.
encoding(V) ->
    bind(proper_types:list(proper_types:integer(0, 255)), fun(Noise) -> iolist_to_binary(element(1, enc(V, Noise))) end).

take([X | R]) -> {X, R};
take([]) -> {0, []}.

ws(Noise) ->
    {N, R} = take(Noise),
    {lists:nth(N rem 6 + 1, [<<>>, <<>>, <<>>, <<" ">>, <<"\n\t">>, <<"\r\n  ">>]), R}.

enc(V, N0) ->
    {W1, N1} = ws(N0),
    {Body, N2} = enc_value(V, N1),
    {W2, N3} = ws(N2),
    {[W1, Body, W2], N3}.

enc_value(true, N) -> {<<"true">>, N};
enc_value(false, N) -> {<<"false">>, N};
enc_value(null, N) -> {<<"null">>, N};
enc_value(I, N) when is_integer(I) -> {integer_to_binary(I), N};
enc_value(F, N) when is_float(F) -> {float_to_binary(F, [short]), N};
enc_value(B, N) when is_binary(B) -> enc_string(B, N);
enc_value(L, N0) when is_list(L) ->
    {Parts, N} = lists:mapfoldl(fun enc/2, N0, L),
    {[$[, lists:join($,, Parts), $]], N};
enc_value(M, N0) when is_map(M) ->
    {Parts, N} = lists:mapfoldl(fun({K, V}, Acc0) ->
        {KW, Acc1} = ws(Acc0),
        {KT, Acc2} = enc_string(K, Acc1),
        {VT, Acc3} = enc(V, Acc2),
        {[KW, KT, $:, VT], Acc3}
    end, N0, maps:to_list(M)),
    {[${, lists:join($,, Parts), $}], N}.

enc_string(B, N0) ->
    {Chars, N} = lists:mapfoldl(fun(C, Acc0) -> {X, Acc} = take(Acc0), {enc_char(C, X), Acc} end, N0,
        unicode:characters_to_list(B)),
    {[$", Chars, $"], N}.

enc_char($", _) -> <<"\\\"">>;
enc_char($\\, _) -> <<"\\\\">>;
enc_char($\n, X) when X rem 2 =:= 0 -> <<"\\n">>;
enc_char($\t, X) when X rem 2 =:= 0 -> <<"\\t">>;
enc_char(C, _) when C < 16#20 -> u(C);
enc_char(C, X) when C >= 16#10000, X rem 3 =:= 0 ->
    V = C - 16#10000,
    [u(16#D800 + (V bsr 10)), u(16#DC00 + (V band 16#3FF))];
enc_char(C, X) when C < 16#10000, X rem 5 =:= 0 -> u(C);
enc_char($/, X) when X rem 2 =:= 1 -> <<"\\/">>;
enc_char(C, _) -> <<C/utf8>>.

u(C) -> io_lib:format("\\u~4.16.0b", [C]).

prop_json_roundtrip() ->
    forall(json_doc(), fun({V, T}) ->
        R = cluster_topology_json:decode_builtin(T),
        when_fail(fun() -> io:format(user, "text ~p~ngave ~p~n", [T, R]) end, R =:= {ok, V})
    end).

%% A document that is an array or object, cut anywhere before its closing bracket.
prop_json_cut_refused() ->
    Container = sized(fun(S) -> proper_types:oneof([
        proper_types:list(json_value(S div 2)),
        bind(proper_types:list({json_string(), json_value(S div 2)}), fun(KVs) -> maps:from_list(KVs) end)
    ]) end),
    Doc = bind(Container, fun(V) -> bind(encoding(V), fun(T) -> {V, T} end) end),
    forall(bind(Doc, fun({_, T0}) ->
        T = trim_ws(T0),
        bind(proper_types:integer(0, byte_size(T) - 1), fun(Cut) -> binary:part(T, 0, Cut) end)
    end), fun(Cut) ->
        R = cluster_topology_json:decode_builtin(Cut),
        when_fail(fun() -> io:format(user, "cut text ~p~ngave ~p~n", [Cut, R]) end,
            element(1, R) =:= error andalso element(1, element(2, R)) =:= invalid_json)
    end).

trim_ws(T) ->
    case binary:last(T) of
        C when C =:= $\s; C =:= $\n; C =:= $\r; C =:= $\t -> trim_ws(binary:part(T, 0, byte_size(T) - 1));
        _ -> T
    end.

prop_json_control_char_refused() ->
    forall({json_string(), proper_types:integer(0, 16#1F)}, fun({B, C}) ->
        Text = iolist_to_binary(element(1, enc_string(B, []))),
        %% the same string without the control character is fine
        {ok, B} = cluster_topology_json:decode_builtin(Text),
        %% the control character put raw into the string, just after its opening quote
        <<$", Rest/binary>> = Text,
        Bad = <<$", C, Rest/binary>>,
        R = cluster_topology_json:decode_builtin(Bad),
        when_fail(fun() -> io:format(user, "text ~p~ngave ~p~n", [Bad, R]) end, element(1, R) =:= error)
    end).

%% On OTP 27 and later: the library's decoder and OTP's `json' give the same value for every
%% generated document (the library uses OTP's where it exists; this keeps the two exchangeable).
prop_json_agrees_with_otp() ->
    case code:ensure_loaded(json) of
        {module, json} ->
            forall(json_doc(), fun({_, T}) ->
                Own = cluster_topology_json:decode_builtin(T),
                Otp = try {ok, erlang:apply(json, decode, [T])} catch error:E -> {error, E} end,
                when_fail(fun() -> io:format(user, "text ~p~nown ~p~notp ~p~n", [T, Own, Otp]) end, Own =:= Otp)
            end);
        _ ->
            {skip, "OTP " ++ erlang:system_info(otp_release) ++ " has no json module; the comparison with it is skipped"}
    end.

%% --- node names --------------------------------------------------------------------------------

name_part() ->
    proper_types:non_empty(proper_types:list(proper_types:elements(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"))).

label() ->
    Alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    proper_types:oneof([
        bind(proper_types:elements(Alnum), fun(C) -> [C] end),
        bind({proper_types:elements(Alnum), proper_types:resize(61, proper_types:list(proper_types:elements([$- | Alnum]))),
              proper_types:elements(Alnum)}, fun({A, M, Z}) -> [A] ++ lists:sublist(M, 61) ++ [Z] end)
    ]).

host() ->
    proper_types:oneof([
        bind(proper_types:non_empty(proper_types:resize(4, proper_types:list(label()))), fun(Ls) -> lists:join($., Ls) end),
        bind(proper_types:vector(4, proper_types:integer(0, 255)), fun(V) -> inet:ntoa(list_to_tuple(V)) end),
        bind(proper_types:vector(8, proper_types:integer(0, 16#FFFF)), fun(V) -> inet:ntoa(list_to_tuple(V)) end)
    ]).

prop_names_generated_accepted() ->
    Name = such_that(bind({name_part(), host()}, fun({N, H}) -> iolist_to_binary([N, $@, H]) end),
        fun(B) -> byte_size(B) =< 255 andalso byte_size(hd(tl(binary:split(B, <<"@">>)))) =< 253 end),
    forall(Name, fun(N) ->
        R = cluster_topology_name:check(N),
        when_fail(fun() -> io:format(user, "~p gave ~p~n", [N, R]) end, R =:= ok)
    end).

%% Near misses and strays: a valid name with one character put in, replaced or taken out, and
%% strings of the characters names are made of mixed with those they must not hold.
name_like() ->
    Char = proper_types:frequency([
        {10, proper_types:elements("abcXYZ019")},
        {6, proper_types:elements("-_.@:")},
        {2, proper_types:elements(" '\"()%/\\,\t")},
        {1, proper_types:integer(16#80, 16#FF)}
    ]),
    Valid = bind({name_part(), host()}, fun({N, H}) -> iolist_to_binary([N, $@, H]) end),
    Mutated = bind({Valid, proper_types:integer(0, 1000), Char, proper_types:elements([insert, replace, delete])},
        fun({V, At0, C, How}) ->
            At = At0 rem byte_size(V),
            <<Before:At/binary, X, After/binary>> = V,
            _ = X,
            case How of
                insert -> <<Before/binary, C, X, After/binary>>;
                replace -> <<Before/binary, C, After/binary>>;
                delete -> <<Before/binary, After/binary>>
            end
        end),
    %% around the 255-byte limit
    Long = bind({proper_types:integer(240, 260), host()}, fun({N, H}) ->
        iolist_to_binary([binary:copy(<<"n">>, max(1, N - length(H) - 1)), $@, H])
    end),
    proper_types:frequency([
        {6, Mutated},
        {2, bind(proper_types:list(Char), fun(L) -> list_to_binary(L) end)},
        {1, Long}
    ]).

%% The grammar (README.md), written independently: name@host, 255 bytes at most; the name
%% [A-Za-z0-9_-]+; the host an RFC 1123 DNS name of at most 253 characters or an IP address
%% (no zone ID).
by_regex(B) ->
    Dns = "^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
    byte_size(B) =< 255 andalso
        case binary:split(B, <<"@">>) of
            [N, H] ->
                re:run(N, "^[A-Za-z0-9_-]+$", [{capture, none}]) =:= match andalso
                    (re:run(H, Dns, [{capture, none}]) =:= match orelse
                     %% an IP address without a zone ID (fe80::1%eth0 is refused)
                     (re:run(H, "^[0-9A-Fa-f.:]+$", [{capture, none}]) =:= match andalso
                      element(1, inet:parse_strict_address(binary_to_list(H))) =:= ok));
            _ ->
                false
        end.

prop_names_agree_with_regex() ->
    forall(proper_types:oneof([name_like(), bind({name_part(), host()}, fun({N, H}) -> iolist_to_binary([N, $@, H]) end)]),
        fun(B) ->
            Own = cluster_topology_name:check(B) =:= ok,
            Ref = by_regex(B),
            when_fail(fun() -> io:format(user, "~p: check ~p, regex ~p~n", [B, Own, Ref]) end, Own =:= Ref)
        end).

prop_no_atom_for_a_refused_name() ->
    forall(such_that(name_like(), fun(B) -> cluster_topology_name:check(B) =/= ok end), fun(B0) ->
        %% made unique, so that no atom of this name can exist before the call
        B = <<B0/binary, "~", (integer_to_binary(erlang:unique_integer([positive])))/binary>>,
        {error, _} = cluster_topology_name:to_atom(B),
        try binary_to_existing_atom(B, utf8) of _ -> false catch error:badarg -> true end
    end).
