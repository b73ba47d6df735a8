%% @doc The node-name grammar every peer name must pass before it becomes an atom (atoms are
%% never freed, so nothing unchecked may reach `binary_to_atom'). The same grammar the operator
%% applies when it publishes names:
%%
%% - `name@host', at most 255 characters in all;
%% - name: one or more of `A-Z a-z 0-9 _ -';
%% - host: an RFC 1123 DNS name (labels of 1-63 letters, digits or `-', not starting or ending
%%   with `-'; 253 characters at most), an IPv4 address or an IPv6 address.
-module(cluster_topology_name).

-export([check/1, to_atom/1]).

-define(MAX_LEN, 255).

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
            case all_bytes(N, fun name_char/1) of
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
    case is_ip(H) orelse is_dns_name(H) of
        true -> ok;
        false -> {error, <<"the host part (after @) is neither a DNS name (RFC 1123) nor an IP address">>}
    end.

is_ip(H) ->
    %% Only ASCII reaches the address parser; it takes charlists.
    all_bytes(H, fun(C) -> C >= 16#21 andalso C =< 16#7e end) andalso
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
    First =/= $- andalso Last =/= $- andalso all_bytes(L, fun label_char/1).

name_char(C) -> alnum(C) orelse C =:= $_ orelse C =:= $-.
label_char(C) -> alnum(C) orelse C =:= $-.
alnum(C) -> (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z) orelse (C >= $0 andalso C =< $9).

all_bytes(B, F) -> lists:all(F, binary_to_list(B)).
