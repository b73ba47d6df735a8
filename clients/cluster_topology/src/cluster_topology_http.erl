%% @doc A small HTTP/1.1 client for the Kubernetes API: one request per connection, TLS always
%% verified, every answer bounded in size and time. A single GET reads the whole body (at most
%% `max_body' bytes); a WATCH hands out one newline-terminated event at a time from a chunked
%% stream (each at most `max_body' bytes). Built on `ssl'/`gen_tcp' and `erlang:decode_packet/3'
%% so that the client needs no `inets' and holds no process of its own.
-module(cluster_topology_http).

-export([get/3, request/5, watch_open/3, watch_next/1, close/1, ssl_options/1]).

-record(conn, {mod :: ssl | gen_tcp, sock :: term(), buf = <<>> :: binary(), timeout :: timeout(), max :: pos_integer(),
    %% chunked-transfer state for streams
    chunk_left = 0 :: non_neg_integer() | done, data = <<>> :: binary(), chunked = true :: boolean()}).

-opaque watch() :: #conn{}.
-export_type([watch/0]).

%% Conf: #{host, port, tls := boolean(), ssl := [ssl option], headers := [{Name, Value}],
%%         connect_timeout, recv_timeout, max_body}

-type conf() :: #{host := string(), port := inet:port_number(), tls := boolean(), atom() => term()}.
-type headers() :: [{iodata(), iodata()}].
-export_type([conf/0]).

%% @doc GET Path; `{ok, Status, Headers, Body}' or `{error, Why}'.
-spec get(conf(), iodata(), headers()) -> {ok, integer(), [{binary(), binary()}], binary()} | {error, term()}.
get(Conf, Path, Extra) ->
    request(Conf, <<"GET">>, Path, Extra, none).

%% @doc A request of `Method' with a body (`{ContentType, Body}') or none; its answer as `get/3'.
-spec request(conf(), binary(), iodata(), headers(), none | {iodata(), iodata()}) ->
    {ok, integer(), [{binary(), binary()}], binary()} | {error, term()}.
request(Conf, Method, Path, Extra, Sent) ->
    case open(Conf) of
        {ok, C} ->
            try
                send_request(C, Conf, Method, Path, Extra, Sent),
                {Status, Headers, C1} = read_head(C),
                Body = read_body(C1, Headers),
                {ok, Status, Headers, Body}
            catch
                throw:{http, Why} -> {error, Why}
            after
                close_conn(C)
            end;
        Error ->
            Error
    end.

%% @doc Starts a watch: `{ok, Watch}' when the server answered 200, `{status, Code, Body}' for
%% another answer, `{error, Why}' when no answer came.
-spec watch_open(conf(), iodata(), headers()) -> {ok, watch()} | {status, integer(), binary()} | {error, term()}.
watch_open(Conf, Path, Extra) ->
    case open(Conf) of
        {ok, C} ->
            try
                send_request(C, Conf, <<"GET">>, Path, Extra, none),
                {Status, Headers, C1} = read_head(C),
                case Status of
                    200 ->
                        Chunked = is_chunked(Headers),
                        {ok, C1#conn{chunked = Chunked, timeout = maps:get(idle_timeout, Conf, 120000)}};
                    _ ->
                        Body = read_body(C1, Headers),
                        close_conn(C1),
                        {status, Status, Body}
                end
            catch
                throw:{http, Why} ->
                    close_conn(C),
                    {error, Why}
            end;
        Error ->
            Error
    end.

%% @doc The next event line of a watch: `{line, Bin, Watch}', `done' (the server ended the
%% stream) or `{error, Why}'. The connection is closed on `done' and on errors.
-spec watch_next(watch()) -> {line, binary(), watch()} | done | {error, term()}.
watch_next(C) ->
    try next_line(C) of
        {line, L, C1} -> {line, L, C1};
        done -> close_conn(C), done
    catch
        throw:{http, Why} -> close_conn(C), {error, Why}
    end.

%% @doc Closes a watch before its end.
-spec close(watch()) -> ok.
close(C) -> close_conn(C).

%% @doc TLS options: the peer is verified against the CA, with the host name (or IP) checked.
-spec ssl_options(#{host := string(), ca_file := string(), cert_file => string() | undefined,
    key_file => string() | undefined}) -> [ssl:tls_client_option()].
ssl_options(#{host := Host, ca_file := CA} = O) ->
    Sni =
        case inet:parse_strict_address(Host) of
            {ok, IP} ->
                %% OTP checks host names against the SNI name, and SNI cannot carry an IP
                %% address: the certificate's IP SAN is checked here instead.
                [{server_name_indication, disable}, {verify_fun, {fun verify_ip/3, IP}}];
            _ ->
                [{server_name_indication, Host},
                 {customize_hostname_check, [{match_fun, public_key:pkix_verify_hostname_match_fun(https)}]}]
        end,
    Client =
        case O of
            #{cert_file := Cert, key_file := Key} when Cert =/= undefined, Key =/= undefined ->
                [{certfile, Cert}, {keyfile, Key}];
            _ ->
                []
        end,
    [
        {verify, verify_peer},
        {cacertfile, CA},
        {depth, 10}
        | Sni ++ Client
    ].

%% The chain is verified as usual (any bad_cert fails); the peer's own certificate must name IP.
verify_ip(_Cert, {bad_cert, _} = Reason, _IP) -> {fail, Reason};
verify_ip(_Cert, {extension, _}, IP) -> {unknown, IP};
verify_ip(_Cert, valid, IP) -> {valid, IP};
verify_ip(Cert, valid_peer, IP) ->
    case public_key:pkix_verify_hostname(Cert, [{ip, IP}]) of
        true -> {valid, IP};
        false -> {fail, {bad_cert, hostname_check_failed}}
    end.

%% ---------------------------------------------------------------------------------------------

open(#{host := Host, port := Port, tls := TLS} = Conf) ->
    Timeout = maps:get(connect_timeout, Conf, 10000),
    Addr =
        case inet:parse_address(Host) of
            {ok, IP} -> IP;
            _ -> Host
        end,
    Base = [binary, {active, false}, {packet, raw} | family(Host)],
    Result =
        case TLS of
            true -> ssl_connect(Addr, Host, Port, Base ++ maps:get(ssl, Conf), Timeout);
            false -> gen_tcp:connect(Addr, Port, Base, Timeout)
        end,
    Mod = case TLS of true -> ssl; false -> gen_tcp end,
    case Result of
        {ok, S} ->
            {ok, #conn{mod = Mod, sock = S, timeout = maps:get(recv_timeout, Conf, 30000),
                max = maps:get(max_body, Conf, 16 * 1024 * 1024)}};
        {error, Why} ->
            {error, {connect, Why}}
    end.

ssl_connect(_Addr, Host, Port, Opts, Timeout) ->
    ssl:connect(Host, Port, Opts, Timeout).

%% An IPv6 literal (`fd00::1', from `https://[fd00::1]:443' or a bare KUBERNETES_SERVICE_HOST) is
%% looked up in its family: without `inet6' the resolver takes it for a host name (nxdomain).
family(Host) ->
    case inet:parse_strict_address(Host) of
        {ok, {_, _, _, _, _, _, _, _}} -> [inet6];
        _ -> []
    end.

close_conn(#conn{mod = M, sock = S}) ->
    try M:close(S) catch _:_ -> ok end,
    ok.

send_request(#conn{mod = M, sock = S}, Conf, Method, Path, Extra, Body) ->
    HostHdr =
        case Conf of
            #{host_header := H} -> H;
            #{host := H, port := P} -> [bracketed(H), $:, integer_to_list(P)]
        end,
    {BodyHeaders, Data} =
        case Body of
            none -> {[], []};
            {Type, D} -> {[{<<"Content-Type">>, Type}, {<<"Content-Length">>, integer_to_binary(iolist_size(D))}], D}
        end,
    Headers = maps:get(headers, Conf, []) ++ Extra ++ BodyHeaders,
    Req = [
        Method, <<" ">>, Path, <<" HTTP/1.1\r\nHost: ">>, HostHdr,
        <<"\r\nAccept: application/json\r\nUser-Agent: cluster-topology-beam\r\nConnection: close\r\n">>,
        [[K, <<": ">>, V, <<"\r\n">>] || {K, V} <- Headers],
        <<"\r\n">>,
        Data
    ],
    case M:send(S, Req) of
        ok -> ok;
        {error, Why} -> throw({http, {send, Why}})
    end.

%% The Host header writes an IPv6 address in brackets, as in a URL (RFC 7230 §5.4).
bracketed(H) ->
    case family(H) of
        [inet6] -> [$[, H, $]];
        [] -> H
    end.

recv(#conn{mod = M, sock = S, timeout = T, buf = B} = C) ->
    case M:recv(S, 0, T) of
        {ok, Data} -> C#conn{buf = <<B/binary, Data/binary>>};
        {error, closed} -> throw({http, closed});
        {error, timeout} -> throw({http, timeout});
        {error, Why} -> throw({http, {recv, Why}})
    end.

read_head(C) ->
    {Status, C1} = status_line(C),
    {Headers, C2} = headers(C1, []),
    {Status, Headers, C2}.

status_line(#conn{buf = B} = C) ->
    case erlang:decode_packet(http_bin, B, [{packet_size, 8192}]) of
        {ok, {http_response, _V, Code, _Reason}, Rest} -> {Code, C#conn{buf = Rest}};
        {ok, Other, _} -> throw({http, {bad_status_line, Other}});
        {more, _} when byte_size(B) > 8192 -> throw({http, status_line_too_long});
        {more, _} -> status_line(recv(C));
        {error, Why} -> throw({http, {bad_status_line, Why}})
    end.

headers(#conn{buf = B}, Acc) when length(Acc) > 100 ->
    throw({http, {too_many_headers, byte_size(B)}});
headers(#conn{buf = B} = C, Acc) ->
    case erlang:decode_packet(httph_bin, B, [{packet_size, 16384}]) of
        {ok, {http_header, _, Name, _, Value}, Rest} ->
            headers(C#conn{buf = Rest}, [{header_name(Name), Value} | Acc]);
        {ok, http_eoh, Rest} ->
            {Acc, C#conn{buf = Rest}};
        {ok, Other, _} ->
            throw({http, {bad_header, Other}});
        {more, _} when byte_size(B) > 16384 -> throw({http, header_too_long});
        {more, _} ->
            headers(recv(C), Acc);
        {error, Why} ->
            throw({http, {bad_header, Why}})
    end.

header_name(A) when is_atom(A) -> string:lowercase(atom_to_binary(A, latin1));
header_name(B) -> string:lowercase(B).

is_chunked(Headers) ->
    case lists:keyfind(<<"transfer-encoding">>, 1, Headers) of
        {_, V} -> string:find(string:lowercase(V), <<"chunked">>) =/= nomatch;
        false -> false
    end.

read_body(C, Headers) ->
    case is_chunked(Headers) of
        true ->
            chunked_all(C, []);
        false ->
            case lists:keyfind(<<"content-length">>, 1, Headers) of
                {_, L} ->
                    Len =
                        try binary_to_integer(string:trim(L))
                        catch _:_ -> throw({http, bad_content_length})
                        end,
                    Len > C#conn.max andalso throw({http, {body_too_large, Len, C#conn.max}}),
                    exactly(C, Len);
                false ->
                    until_close(C)
            end
    end.

exactly(#conn{buf = B}, Len) when byte_size(B) >= Len -> binary:part(B, 0, Len);
exactly(C, Len) -> exactly(recv(C), Len).

until_close(#conn{buf = B, max = Max}) when byte_size(B) > Max -> throw({http, {body_too_large, Max}});
until_close(C) ->
    try recv(C) of
        C1 -> until_close(C1)
    catch
        throw:{http, closed} -> C#conn.buf
    end.

chunked_all(C, Acc) ->
    case next_chunk(C) of
        {data, D, C1} ->
            Size = iolist_size(Acc) + byte_size(D),
            Size > C#conn.max andalso throw({http, {body_too_large, C#conn.max}}),
            chunked_all(C1, [Acc, D]);
        {last, _} ->
            iolist_to_binary(Acc)
    end.

%% One chunk of a chunked body: `{data, Bin, C}' or `{last, C}'.
next_chunk(#conn{buf = B, max = Max} = C) ->
    case binary:match(B, <<"\r\n">>) of
        nomatch when byte_size(B) > 1024 -> throw({http, bad_chunk_size});
        nomatch -> next_chunk(recv(C));
        {Pos, 2} ->
            <<SizeLine:Pos/binary, "\r\n", Rest/binary>> = B,
            [Hex | _] = binary:split(SizeLine, <<";">>),
            Size =
                try binary_to_integer(string:trim(Hex), 16)
                catch _:_ -> throw({http, bad_chunk_size})
                end,
            Size > Max andalso throw({http, {chunk_too_large, Size, Max}}),
            case Size of
                0 -> {last, C#conn{buf = Rest}};
                _ ->
                    C1 = fill(C#conn{buf = Rest}, Size + 2),
                    <<Data:Size/binary, "\r\n", Rest1/binary>> = C1#conn.buf,
                    {data, Data, C1#conn{buf = detach(Rest1)}}
            end
    end.

fill(#conn{buf = B} = C, N) when byte_size(B) >= N -> C;
fill(C, N) -> fill(recv(C), N).

%% Watch events are newline-terminated JSON documents; chunk boundaries are not trusted.
next_line(#conn{data = D, max = Max} = C) ->
    case binary:match(D, <<"\n">>) of
        {Pos, 1} ->
            <<Line:Pos/binary, "\n", Rest/binary>> = D,
            {line, Line, C#conn{data = detach(Rest)}};
        nomatch when byte_size(D) > Max ->
            throw({http, {event_too_large, Max}});
        nomatch ->
            case more_data(C) of
                {ok, C1} -> next_line(C1);
                done -> done
            end
    end.

more_data(#conn{chunked = true, data = D} = C) ->
    case next_chunk(C) of
        {data, New, C1} -> {ok, C1#conn{data = <<D/binary, New/binary>>}};
        {last, _} -> done
    end;
more_data(#conn{chunked = false, buf = B, data = D} = C) ->
    case B of
        <<>> ->
            try recv(C) of
                C1 -> {ok, C1#conn{buf = <<>>, data = <<D/binary, (C1#conn.buf)/binary>>}}
            catch
                throw:{http, closed} -> done
            end;
        _ ->
            {ok, C#conn{buf = <<>>, data = <<D/binary, B/binary>>}}
    end.

%% What is left of a buffer once an event or chunk was taken from it, as a binary of its own: a
%% sub-binary would keep the whole buffer (the size of the last event) alive while the watch
%% waits, possibly for minutes.
detach(<<>>) -> <<>>;
detach(B) -> binary:copy(B).
