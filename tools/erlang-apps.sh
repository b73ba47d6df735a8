# Sourced by .ci/run: the Debian packages of the Erlang applications the tests load, each found
# missing by its code (the application's ebin/ holding the module the tests need), never by a
# directory name: erlang-dev alone ships lib/eunit-*/include/, and with it but without
# erlang-eunit, `npm test` fails with "undefined parse transform 'eunit_autoexport'".

# application, the module whose .beam proves it, its Debian package
ERLANG_APPS=(
  'ssl ssl erlang-ssl'
  'public_key public_key erlang-public-key'
  'crypto crypto erlang-crypto'
  'inets inets erlang-inets'
  'eunit eunit_autoexport erlang-eunit'
)

# The directory of the installed applications: what erl says, else Debian's place.
erlang_lib_dir() {
  if command -v erl >/dev/null; then
    erl -noshell -eval 'io:put_chars(code:lib_dir()), halt().'
  else
    echo /usr/lib/erlang/lib
  fi
}

# missing_erlang_packages [LIBDIR]: one package per line for each application without its code.
missing_erlang_packages() {
  local lib=${1:-$(erlang_lib_dir)} entry app module package
  for entry in "${ERLANG_APPS[@]}"; do
    read -r app module package <<<"$entry"
    compgen -G "$lib/$app-*/ebin/$module.beam" >/dev/null || echo "$package"
  done
}
