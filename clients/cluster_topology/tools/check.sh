#!/usr/bin/env bash
# The OTP library's checks, with OTP alone (and PropEr for the property tests when installed):
#
#   tools/check.sh build      compile src/ with +warnings_as_errors, and write ebin/cluster_topology.app
#   tools/check.sh eunit      build, then every *_tests module in test/
#   tools/check.sh xref       build, then xref (undefined and deprecated calls, unused functions)
#                             and every exported function's -spec
#   tools/check.sh dialyzer   build, then dialyzer against a PLT of the OTP applications it uses
#   tools/check.sh all        build, eunit, xref and dialyzer
#
# OUT=<dir> receives ebin/ and test-ebin/ (default: a new temp dir, removed at the end).
# The dialyzer PLT is built once per OTP release and kept: CT_PLT=<file>, by default
# ${XDG_CACHE_HOME:-~/.cache}/cluster-topology/dialyzer/otp-<release>-erts-<version>.plt.
# CT_EUNIT_LOGS=1 keeps logger's output during eunit (off: the tests capture what they check).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}

if [[ -n ${OUT:-} ]]; then
  out=$OUT
  mkdir -p "$out"
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/ct-check.XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi
ebin=$out/ebin
tebin=$out/test-ebin

otp() { erl -noshell -eval "io:format(\"~s\", [$1]), halt()."; }

build() {
  rm -rf "$ebin" && mkdir -p "$ebin"
  erlc +warnings_as_errors +debug_info -o "$ebin" "$here"/src/*.erl
  cp "$here/src/cluster_topology.app.src" "$ebin/cluster_topology.app"
  echo "build: $(ls "$ebin"/*.beam | wc -l) modules, OTP $(otp 'erlang:system_info(otp_release)')"
}

eunit() {
  rm -rf "$tebin" && mkdir -p "$tebin"
  erlc +warnings_as_errors -pa "$ebin" -o "$tebin" "$here"/test/*.erl
  local mods
  mods=$(cd "$here/test" && ls ./*_tests.erl | sed 's|^\./||; s|\.erl$||' | paste -sd, -)
  local quiet='[logger:remove_handler(H) || H <- [default, simple]],'
  [[ ${CT_EUNIT_LOGS:-0} == 1 ]] && quiet=''
  erl -noshell -pa "$ebin" -pa "$tebin" \
    -eval "$quiet halt(case eunit:test([$mods], []) of ok -> 0; _ -> 1 end)."
}

xref_check() {
  erl -noshell -eval "
    {ok, _} = xref:start(ct_xref),
    ok = xref:set_library_path(ct_xref, code_path),
    ok = xref:set_default(ct_xref, [{warnings, false}]),
    {ok, _} = xref:add_directory(ct_xref, \"$ebin\"),
    Checks = [undefined_function_calls, locals_not_used, deprecated_function_calls],
    Found = [{C, R} || C <- Checks, {ok, R} <- [xref:analyze(ct_xref, C)], R =/= []],
    [io:format(\"xref ~s: ~p~n\", [C, R]) || {C, R} <- Found],
    io:format(\"xref: ~s~n\", [case Found of [] -> \"clean\"; _ -> \"FOUND PROBLEMS\" end]),
    NoSpec = lists:append([begin
        {ok, {M, [{abstract_code, {_, Forms}}]}} = beam_lib:chunks(B, [abstract_code]),
        Specs = [FA || {attribute, _, spec, {FA, _}} <- Forms],
        [{M, F, A} || {attribute, _, export, Es} <- Forms, {F, A} <- Es, not lists:member({F, A}, Specs)]
    end || B <- filelib:wildcard(\"$ebin/*.beam\")]),
    io:format(\"specs: ~s~n\", [case NoSpec of [] -> \"every export has one\"; _ -> io_lib:format(\"missing for ~p\", [NoSpec]) end]),
    halt(case {Found, NoSpec} of {[], []} -> 0; _ -> 1 end)."
}

dialyzer_check() {
  command -v dialyzer >/dev/null || { echo "dialyzer is not installed (Debian: erlang-dialyzer)" >&2; exit 1; }
  local plt=${CT_PLT:-${XDG_CACHE_HOME:-$HOME/.cache}/cluster-topology/dialyzer/otp-$(otp 'erlang:system_info(otp_release)')-erts-$(otp 'erlang:system_info(version)').plt}
  mkdir -p "$(dirname "$plt")"
  if [[ ! -s $plt ]]; then
    echo "dialyzer: building $plt (once per OTP release; minutes)"
    dialyzer --build_plt --output_plt "$plt.tmp" --apps erts kernel stdlib crypto public_key ssl >/dev/null || [[ -s $plt.tmp ]]
    mv "$plt.tmp" "$plt"
  fi
  # -Wunknown: a call to a function that does not exist fails the check (the default from OTP 26).
  dialyzer --plt "$plt" -Wunmatched_returns -Wunknown "$ebin"
}

case $what in
  build) build ;;
  eunit) build && eunit ;;
  xref) build && xref_check ;;
  dialyzer) build && dialyzer_check ;;
  all) build && eunit && xref_check && dialyzer_check ;;
  *) echo "usage: $0 build|eunit|xref|dialyzer|all" >&2; exit 64 ;;
esac
