%% @doc The node-name grammar every peer name must pass before it becomes an atom (atoms are
%% never freed, so nothing unchecked may reach `binary_to_atom'). The same grammar the operator
%% applies when it publishes names:
%%
%% - `name@host', at most 255 characters in all;
%% - name: one or more of `A-Z a-z 0-9 _ -';
%% - host: an RFC 1123 DNS name (labels of 1-63 letters, digits or `-', not starting or ending
%%   with `-'; 253 characters at most), an IPv4 address or an IPv6 address (without a zone ID
%%   such as `%eth0': an interface of one host means nothing to another).
-module(cluster_topology_name).

-export([check/1, to_atom/1]).

-define(MAX_LEN, 255).
-define(NOT_A_HOST, <<"the host part (after @) is neither a DNS name (RFC 1123) nor an IP address">>).

-spec check(binary()) -> ok | {error, binary()}.
check(Name) when is_binary(Name), byte_size(Name) > ?MAX_LEN ->
    {error, <<"longer than 255 characters">>};
check(Name) when is_binary(Name) ->
    case binary:split(Name, <<"@">>) of
        [_] ->
            {error, <<"no @ between name and host">>};
        [<<>>, _] ->
            {error, <<"the name part (before @) is empty">>};
        [N, H] ->
            case name_chars(N) of
                false -> {error, <<"the name part (before @) may only hold letters, digits, _ and -">>};
                true -> check_host(H)
            end
    end;
check(_) ->
    {error, <<"not a string">>}.

%% The atom for a checked name; `{error, _}' for anything else (no atom is created then).
-spec to_atom(binary()) -> {ok, node()} | {error, binary()}.
to_atom(Name) ->
    case check(Name) of
        ok -> {ok, binary_to_atom(Name, utf8)};
        Error -> Error
    end.

check_host(<<>>) ->
    {error, <<"the host part (after @) is empty">>};
check_host(H) ->
    case binary:split(H, <<"%">>) of
        [_] ->
            case is_ip(H) orelse is_dns_name(H) of
                true -> ok;
                false -> {error, ?NOT_A_HOST}
            end;
        [Addr, _Zone] ->
            %% Only IPv6 addresses have zones, and OTP's parser would drop the zone.
            case binary:match(Addr, <<":">>) =/= nomatch andalso is_ip(Addr) of
                true -> {error, <<"the host part (after @) is an IPv6 address with a zone ID (such as %eth0), which no other node can use">>};
                false -> {error, ?NOT_A_HOST}
            end
    end.

is_ip(H) ->
    %% Only what can be an address reaches the address parser (it takes charlists): IPv4 is
    %% digits and dots, IPv6 holds a colon (which no DNS name does).
    (ipv4_chars(H) orelse binary:match(H, <<":">>) =/= nomatch) andalso printable(H) andalso
        case inet:parse_strict_address(binary_to_list(H)) of
            {ok, _} -> true;
            _ -> false
        end.

is_dns_name(H) when byte_size(H) > 253 -> false;
is_dns_name(H) -> lists:all(fun is_label/1, binary:split(H, <<".">>, [global])).

is_label(L) when byte_size(L) < 1; byte_size(L) > 63 -> false;
is_label(L) ->
    First = binary:first(L),
    Last = binary:last(L),
    First =/= $- andalso Last =/= $- andalso label_chars(L).

%% Byte loops (a name is checked for every listed peer at every status change).
-define(ALNUM(C), ((C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z) orelse (C >= $0 andalso C =< $9))).

name_chars(<<C, R/binary>>) when ?ALNUM(C); C =:= $_; C =:= $- -> name_chars(R);
name_chars(<<>>) -> true;
name_chars(_) -> false.

label_chars(<<C, R/binary>>) when ?ALNUM(C); C =:= $- -> label_chars(R);
label_chars(<<>>) -> true;
label_chars(_) -> false.

ipv4_chars(<<C, R/binary>>) when C >= $0, C =< $9; C =:= $. -> ipv4_chars(R);
ipv4_chars(<<>>) -> true;
ipv4_chars(_) -> false.

printable(<<C, R/binary>>) when C >= 16#21, C =< 16#7e -> printable(R);
printable(<<>>) -> true;
printable(_) -> false.
