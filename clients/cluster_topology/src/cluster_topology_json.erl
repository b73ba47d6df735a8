%% @doc JSON for the Kubernetes API: decoding its answers, and encoding the one object this
%% library writes (its member report).
%%
%% OTP 27 and later ship a `json' module; it is used when present. On OTP 25 and 26 the decoder
%% below (RFC 8259) is used. Both produce the same terms: objects are maps with binary keys,
%% arrays lists, strings UTF-8 binaries, numbers integers or floats, and `true', `false', `null'.
%% A key repeated in one object keeps its last value, as the API server's own decoder (Go's
%% encoding/json) and JavaScript's JSON.parse do; OTP's `json:decode/1' keeps the first, so it is
%% called with an `object_finish' that says otherwise.
%%
%% The decoder never creates atoms, refuses anything that is not one JSON text (trailing bytes,
%% bad escapes, lone surrogates, invalid UTF-8, control characters in strings, leading zeros,
%% nesting deeper than ?MAX_DEPTH) and returns `{error, Reason}' instead of raising.
-module(cluster_topology_json).

-export([decode/1, decode_builtin/1, encode/1]).

-define(MAX_DEPTH, 512).

-type value() :: #{binary() => value()} | [value()] | binary() | number() | true | false | null.
-export_type([value/0]).

%% @doc Encodes a term of `value()' as JSON, UTF-8. Strings are
%% escaped as RFC 8259 requires (the quote, the backslash and control characters); floats are not
%% used by the report, so numbers are integers.
-spec encode(value()) -> iodata().
encode(M) when is_map(M) ->
    [${, lists:join($,, [[encode(K), $:, encode(V)] || {K, V} <- lists:sort(maps:to_list(M))]), $}];
encode(L) when is_list(L) -> [$[, lists:join($,, [encode(X) || X <- L]), $]];
encode(B) when is_binary(B) -> [$", esc(B, <<>>), $"];
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(null) -> <<"null">>;
encode(I) when is_integer(I) -> integer_to_binary(I).

esc(<<>>, Acc) -> Acc;
esc(<<$", R/binary>>, Acc) -> esc(R, <<Acc/binary, "\\\"">>);
esc(<<$\\, R/binary>>, Acc) -> esc(R, <<Acc/binary, "\\\\">>);
esc(<<C, R/binary>>, Acc) when C < 16#20 ->
    esc(R, <<Acc/binary, (iolist_to_binary(io_lib:format("\\u~4.16.0b", [C])))/binary>>);
esc(<<C, R/binary>>, Acc) -> esc(R, <<Acc/binary, C>>).

-spec decode(binary()) -> {ok, value()} | {error, term()}.
decode(Bin) when is_binary(Bin) ->
    case otp_json() of
        true ->
            try erlang:apply(optional(json), decode, [Bin, ok, #{object_finish => fun last_wins/2}]) of
                {V, ok, Rest} ->
                    case skip_ws(Rest) of
                        <<>> -> {ok, V};
                        _ -> {error, {invalid_json, trailing_data}}
                    end
            catch
                error:R -> {error, {invalid_json, R}}
            end;
        false ->
            decode_builtin(Bin)
    end.

%% The decoder of this library, whatever the OTP release (tests use it directly).
-spec decode_builtin(binary()) -> {ok, value()} | {error, term()}.
decode_builtin(Bin) when is_binary(Bin) ->
    try
        {V, Rest} = value(skip_ws(Bin), 0),
        case skip_ws(Rest) of
            <<>> -> {ok, V};
            _ -> {error, {invalid_json, trailing_data}}
        end
    catch
        throw:{json, Why} -> {error, {invalid_json, Why}}
    end.

%% The pairs arrive newest first; maps:from_list keeps the last of a repeated key.
last_wins(Pairs, Acc) -> {maps:from_list(lists:reverse(Pairs)), Acc}.

%% A module that may not exist (OTP 25 and 26 have no `json'), named at run time: a call to
%% it written out would make xref and dialyzer report an undefined function there.
optional(json) -> list_to_existing_atom("json").

otp_json() ->
    case persistent_term:get({?MODULE, otp_json}, undefined) of
        undefined ->
            Has =
                code:ensure_loaded(json) =:= {module, json} andalso
                    erlang:function_exported(json, decode, 1),
            persistent_term:put({?MODULE, otp_json}, Has),
            Has;
        Has ->
            Has
    end.

bad(Why) -> throw({json, Why}).

skip_ws(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> skip_ws(R);
skip_ws(B) -> B.

value(_, D) when D > ?MAX_DEPTH -> bad(too_deep);
value(<<${, R/binary>>, D) -> object(skip_ws(R), D + 1, #{});
value(<<$[, R/binary>>, D) -> array(skip_ws(R), D + 1);
value(<<$", R/binary>>, _) -> string(R, []);
value(<<"true", R/binary>>, _) -> {true, R};
value(<<"false", R/binary>>, _) -> {false, R};
value(<<"null", R/binary>>, _) -> {null, R};
value(<<C, _/binary>> = B, _) when C =:= $-; C >= $0, C =< $9 -> number(B);
value(<<>>, _) -> bad(unexpected_end);
value(<<C, _/binary>>, _) -> bad({unexpected_byte, C}).

object(<<$}, R/binary>>, _, Acc) when map_size(Acc) =:= 0 -> {Acc, R};
object(<<$", R/binary>>, D, Acc) ->
    {K, R1} = string(R, []),
    case skip_ws(R1) of
        <<$:, R2/binary>> ->
            {V, R3} = value(skip_ws(R2), D),
            Acc1 = Acc#{K => V},
            case skip_ws(R3) of
                <<$,, R4/binary>> -> object_key(skip_ws(R4), D, Acc1);
                <<$}, R4/binary>> -> {Acc1, R4};
                _ -> bad(expected_comma_or_brace)
            end;
        _ ->
            bad(expected_colon)
    end;
object(_, _, _) ->
    bad(expected_key).

object_key(<<$", _/binary>> = B, D, Acc) -> object(B, D, Acc);
object_key(_, _, _) -> bad(expected_key).

array(<<$], R/binary>>, _) -> {[], R};
array(B, D) -> array_items(B, D, []).

array_items(B, D, Acc) ->
    {V, R} = value(B, D),
    case skip_ws(R) of
        <<$,, R1/binary>> -> array_items(skip_ws(R1), D, [V | Acc]);
        <<$], R1/binary>> -> {lists:reverse([V | Acc]), R1};
        _ -> bad(expected_comma_or_bracket)
    end.

%% Strings: runs of plain bytes are copied as sub-binaries; UTF-8 is checked once at the end.
string(B, Acc) ->
    N = plain_len(B, 0),
    <<Run:N/binary, R/binary>> = B,
    case R of
        <<$", R1/binary>> -> {finish_string([Run | Acc]), R1};
        <<$\\, R1/binary>> -> escape(R1, [Run | Acc]);
        <<>> -> bad(unterminated_string);
        <<C, _/binary>> -> bad({control_character_in_string, C})
    end.

plain_len(B, N) ->
    case B of
        <<_:N/binary, C, _/binary>> when C >= 16#20, C =/= $", C =/= $\\ -> plain_len(B, N + 1);
        _ -> N
    end.

finish_string(Parts) ->
    Bin = iolist_to_binary(lists:reverse(Parts)),
    case unicode:characters_to_binary(Bin, utf8, utf8) of
        Bin -> Bin;
        _ -> bad(invalid_utf8)
    end.

escape(<<$", R/binary>>, Acc) -> string(R, [$" | Acc]);
escape(<<$\\, R/binary>>, Acc) -> string(R, [$\\ | Acc]);
escape(<<$/, R/binary>>, Acc) -> string(R, [$/ | Acc]);
escape(<<$b, R/binary>>, Acc) -> string(R, [$\b | Acc]);
escape(<<$f, R/binary>>, Acc) -> string(R, [$\f | Acc]);
escape(<<$n, R/binary>>, Acc) -> string(R, [$\n | Acc]);
escape(<<$r, R/binary>>, Acc) -> string(R, [$\r | Acc]);
escape(<<$t, R/binary>>, Acc) -> string(R, [$\t | Acc]);
escape(<<$u, H:4/binary, R/binary>>, Acc) ->
    case hex4(H) of
        Hi when Hi >= 16#D800, Hi =< 16#DBFF ->
            case R of
                <<"\\u", L:4/binary, R1/binary>> ->
                    case hex4(L) of
                        Lo when Lo >= 16#DC00, Lo =< 16#DFFF ->
                            Cp = 16#10000 + ((Hi - 16#D800) bsl 10) + (Lo - 16#DC00),
                            string(R1, [<<Cp/utf8>> | Acc]);
                        _ ->
                            bad(lone_surrogate)
                    end;
                _ ->
                    bad(lone_surrogate)
            end;
        Lo when Lo >= 16#DC00, Lo =< 16#DFFF ->
            bad(lone_surrogate);
        Cp ->
            string(R, [<<Cp/utf8>> | Acc])
    end;
escape(_, _) ->
    bad(invalid_escape).

hex4(<<A, B, C, D>>) -> (hex(A) bsl 12) bor (hex(B) bsl 8) bor (hex(C) bsl 4) bor hex(D).

hex(C) when C >= $0, C =< $9 -> C - $0;
hex(C) when C >= $a, C =< $f -> C - $a + 10;
hex(C) when C >= $A, C =< $F -> C - $A + 10;
hex(_) -> bad(invalid_escape).

%% Numbers: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
number(B) ->
    {Sign, B1} =
        case B of
            <<$-, X/binary>> -> {<<"-">>, X};
            _ -> {<<>>, B}
        end,
    {Int, B2} =
        case B1 of
            <<$0, X2/binary>> -> {<<"0">>, X2};
            <<C, _/binary>> when C >= $1, C =< $9 -> digits(B1);
            _ -> bad(invalid_number)
        end,
    {Frac, B3} =
        case B2 of
            <<$., X3/binary>> ->
                case digits(X3) of
                    {<<>>, _} -> bad(invalid_number);
                    {F, X4} -> {F, X4}
                end;
            _ ->
                {none, B2}
        end,
    {Exp, B4} =
        case B3 of
            <<E, X5/binary>> when E =:= $e; E =:= $E ->
                {ESign, X6} =
                    case X5 of
                        <<$+, Y/binary>> -> {<<>>, Y};
                        <<$-, Y/binary>> -> {<<"-">>, Y};
                        _ -> {<<>>, X5}
                    end,
                case digits(X6) of
                    {<<>>, _} -> bad(invalid_number);
                    {ED, X7} -> {<<ESign/binary, ED/binary>>, X7}
                end;
            _ ->
                {none, B3}
        end,
    {to_number(Sign, Int, Frac, Exp), B4}.

digits(B) ->
    N = digits_len(B, 0),
    <<D:N/binary, R/binary>> = B,
    {D, R}.

digits_len(B, N) ->
    case B of
        <<_:N/binary, C, _/binary>> when C >= $0, C =< $9 -> digits_len(B, N + 1);
        _ -> N
    end.

to_number(Sign, Int, none, none) ->
    binary_to_integer(<<Sign/binary, Int/binary>>);
to_number(Sign, Int, Frac, Exp) ->
    F = case Frac of none -> <<"0">>; _ -> Frac end,
    E = case Exp of none -> <<"0">>; _ -> Exp end,
    %% Exponents beyond any float's range are refused rather than computed.
    case abs(binary_to_integer(E)) > 400 of
        true when Int =:= <<"0">>, F =:= <<"0">> -> 0.0 * sign(Sign);
        true -> big_exponent(Sign, E);
        false ->
            try binary_to_float(<<Sign/binary, Int/binary, ".", F/binary, "e", E/binary>>)
            catch error:badarg -> bad(number_out_of_range)
            end
    end.

sign(<<"-">>) -> -1;
sign(_) -> 1.

%% An underflow is a zero of the number's sign (OTP 27 and later tell -0.0 from 0.0, as json does).
big_exponent(Sign, <<"-", _/binary>>) -> 0.0 * sign(Sign);
big_exponent(_, _) -> bad(number_out_of_range).
