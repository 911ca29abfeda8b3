# Zephyr builds of the firmware roles, sourced by Tools/firmware: ROLE@BOARD for the Zephyr boards
# below builds Firmware/Zephyr (the Zephyr 2.5 application around the role files Firmware/Wearable or
# Firmware/Beacon) with cmake and ninja from the offline bundle ../shared/zephyr-sdk, into
# .build/firmware/zephyr/BOARD/ROLE/ (the program: zephyr/zephyr.exe on nrf52_bsim, zephyr/zephyr.hex
# on the real boards). The core modules are compiled once per architecture into
# .build/firmware/zephyr/core-ARCH/ and linked by every board of that architecture.
# Uses from Tools/firmware: ROOT, SWIFTC, COMMON_SWIFTFLAGS, OPTION_DEFINES, OUT_ROOT.

ZEPHYR_BOARDS="nrf52_bsim, nrf52840dongle, nrf52dk_nrf52832, nrf52840dk"

# Zephyr's name of one of our boards, or nothing.
zephyr_board_name() {
  case $1 in
    nrf52_bsim) echo nrf52_bsim ;;
    nrf52840dongle) echo nrf52840dongle_nrf52840 ;;
    nrf52dk_nrf52832) echo nrf52dk_nrf52832 ;;
    nrf52840dk) echo nrf52840dk_nrf52840 ;;
  esac
}

is_zephyr_target() { [[ $1 == *@* ]] && [ -n "$(zephyr_board_name "${1#*@}")" ]; }

zephyr_fail() { echo "Tools/firmware: $*" >&2; exit 2; }

# What a Zephyr build needs: each missing piece is one line saying how to get it, and exit 2.
zephyr_check_tools() {
  local board=$1 m
  ZEPHYR_SDK_SOURCE=$ROOT/../shared/zephyr-sdk
  [ -x "$ZEPHYR_SDK_SOURCE/unpack.sh" ] ||
    zephyr_fail "no Zephyr SDK: ../shared/zephyr-sdk beside the repository is missing (the offline Zephyr 2.5 bundle; see Firmware/Zephyr/README.md)"
  command -v cmake >/dev/null 2>&1 || zephyr_fail "cmake is missing (apt-get install cmake)"
  command -v ninja >/dev/null 2>&1 || zephyr_fail "ninja is missing (apt-get install ninja-build)"
  command -v dtc >/dev/null 2>&1 || zephyr_fail "dtc is missing (apt-get install device-tree-compiler)"
  command -v xz >/dev/null 2>&1 || zephyr_fail "xz is missing (apt-get install xz-utils)"
  # Zephyr's scripts need these modules: the first python3 on PATH that has them all (a pyenv or
  # venv python3 may come first), else Debian's.
  local modules="import elftools, yaml, pykwalify.core, dateutil, packaging" p
  ZEPHYR_PYTHON=
  for p in "$(command -v python3 || true)" /usr/bin/python3; do
    [ -n "$p" ] && [ -x "$p" ] && "$p" -c "$modules" 2>/dev/null && { ZEPHYR_PYTHON=$p; break; }
  done
  if [ -z "$ZEPHYR_PYTHON" ]; then
    p=/usr/bin/python3; [ -x "$p" ] || zephyr_fail "python3 is missing (apt-get install python3)"
    # pykwalify needs ruamel.yaml, which Debian's python3-pykwalify only recommends.
    for m in elftools:python3-pyelftools yaml:python3-yaml ruamel.yaml:python3-ruamel.yaml \
             pykwalify.core:python3-pykwalify dateutil:python3-dateutil packaging:python3-packaging; do
      "$p" -c "import ${m%%:*}" 2>/dev/null ||
        zephyr_fail "the python3 module ${m%%:*} is missing (apt-get install ${m#*:})"
    done
  fi
  if [ "$board" = nrf52_bsim ]; then
    echo 'int main(void) { return 0; }' | gcc -m32 -x c - -o /dev/null 2>/dev/null ||
      zephyr_fail "gcc cannot build 32-bit programs for nrf52_bsim (apt-get install gcc-multilib)"
  else
    command -v arm-none-eabi-gcc >/dev/null 2>&1 ||
      zephyr_fail "arm-none-eabi-gcc is missing for $board (apt-get install gcc-arm-none-eabi)"
    [ -f "$(arm-none-eabi-gcc -print-file-name=libc_nano.a)" ] || [ -f "$(arm-none-eabi-gcc -print-file-name=libc.a)" ] ||
      zephyr_fail "newlib for arm-none-eabi is missing for $board (apt-get install libnewlib-arm-none-eabi)"
  fi
}

# The core modules for one architecture (i686 or armv7em), compiled when a source or the flags
# changed: ZEPHYR_CORE (the folder) and ZEPHYR_SWIFTFLAGS (the flags without the target).
# The flags are the QEMU images' without -lto=llvm-full: Zephyr links with GNU ld, which takes no
# LLVM bitcode, so each module is a machine-code object (-function-sections; the link's
# --gc-sections drops what is unused).
zephyr_core() {
  local arch=$1 target stamp newest f
  ZEPHYR_SWIFTFLAGS=()
  for f in "${COMMON_SWIFTFLAGS[@]}"; do [ "$f" = -lto=llvm-full ] || ZEPHYR_SWIFTFLAGS+=("$f"); done
  case $arch in
    i686) target=i686-unknown-none-elf ;;
    armv7em) target=armv7em-none-none-eabi; ZEPHYR_SWIFTFLAGS+=(-Xcc -mfloat-abi=soft) ;;
  esac
  ZEPHYR_CORE=$OUT_ROOT/zephyr/core-$arch
  mkdir -p "$ZEPHYR_CORE"
  stamp=$ZEPHYR_CORE/core.stamp
  newest=$(find Sources/BluetoothHost Sources/Herald -name '*.swift' -newer "$stamp" 2>/dev/null | head -n1 || true)
  if [ -f "$stamp" ] && [ -z "$newest" ] && [ "$(cat "$stamp")" = "$target ${ZEPHYR_SWIFTFLAGS[*]}" ]; then return; fi
  echo "compiling core modules (BluetoothHost, Herald) for $target" >&2
  local host herald
  mapfile -t host < <(find Sources/BluetoothHost -name '*.swift' | sort)
  mapfile -t herald < <(find Sources/Herald -name '*.swift' | sort)
  "$SWIFTC" -target "$target" "${ZEPHYR_SWIFTFLAGS[@]}" -module-name BluetoothHost -emit-module \
    -emit-module-path "$ZEPHYR_CORE/BluetoothHost.swiftmodule" -I "$ZEPHYR_CORE" -c "${host[@]}" -o "$ZEPHYR_CORE/BluetoothHost.o"
  "$SWIFTC" -target "$target" "${ZEPHYR_SWIFTFLAGS[@]}" -module-name Herald -emit-module \
    -emit-module-path "$ZEPHYR_CORE/Herald.swiftmodule" -I "$ZEPHYR_CORE" -c "${herald[@]}" -o "$ZEPHYR_CORE/Herald.o"
  printf '%s' "$target ${ZEPHYR_SWIFTFLAGS[*]}" > "$stamp"
}

# Builds ROLE@BOARD and prints `ROLE@BOARD flash=N ram=N`.
build_zephyr_image() {
  local label=$1 role=${1%@*} board=${1#*@} zboard dir arch options=() d args
  zboard=$(zephyr_board_name "$board")
  [ "$role" = wearable ] || [ "$role" = beacon ] || zephyr_fail "no role named $role (wearable, beacon)"
  zephyr_check_tools "$board"
  "$ZEPHYR_SDK_SOURCE/unpack.sh" "$ROOT/.build/zephyr-sdk-2.5" >/dev/null
  # shellcheck disable=SC1091
  . "$ROOT/.build/zephyr-sdk-2.5/env.sh"
  if [ "$board" = nrf52_bsim ]; then
    arch=i686; export ZEPHYR_TOOLCHAIN_VARIANT=host; unset CROSS_COMPILE
  else
    arch=armv7em; export ZEPHYR_TOOLCHAIN_VARIANT=cross-compile
    CROSS_COMPILE=$(dirname "$(command -v arm-none-eabi-gcc)")/arm-none-eabi-; export CROSS_COMPILE
  fi
  zephyr_core "$arch"
  for d in "${OPTION_DEFINES[@]}"; do options+=("${d#-D}"); done
  dir=$OUT_ROOT/zephyr/$board/$role
  mkdir -p "$dir"
  args=(-GNinja -B "$dir" -S Firmware/Zephyr -DBOARD="$zboard" -DFIRMWARE_ROLE="$role"
        -DFIRMWARE_CORE_DIR="$ZEPHYR_CORE" -DFIRMWARE_SWIFTFLAGS="${ZEPHYR_SWIFTFLAGS[*]}"
        "-DFIRMWARE_OPTIONS=$(IFS=';'; echo "${options[*]}")" -DSWIFTC="$SWIFTC" -DPYTHON_EXECUTABLE="$ZEPHYR_PYTHON" -DPython3_EXECUTABLE="$ZEPHYR_PYTHON" -DZEPHYR_MODULES="$ZEPHYR_MODULES")
  # Configure when the arguments (board, flags, build options) differ from the last configuration's;
  # ninja itself reruns cmake when a CMake or Kconfig file changed.
  if [ ! -f "$dir/build.ninja" ] || [ "$(printf '%s\n' "${args[@]}")" != "$(cat "$dir/configure.args" 2>/dev/null)" ]; then
    echo "configuring $label" >&2
    rm -f "$dir/configure.args"
    if ! cmake "${args[@]}" > "$dir/configure.log" 2>&1; then
      tail -n 30 "$dir/configure.log" >&2; zephyr_fail "$label: cmake failed (log: $dir/configure.log)"
    fi
    printf '%s\n' "${args[@]}" > "$dir/configure.args"
  fi
  if ! ninja -C "$dir" -j2 > "$dir/build.log" 2>&1; then
    grep -E 'error|Error' "$dir/build.log" | head -n 30 >&2; zephyr_fail "$label: build failed (log: $dir/build.log)"
  fi
  [ "$role" != wearable ] || zephyr_key_file "$dir"
  zephyr_report_size "$label" "$board" "$dir"
}

# The wearable's key as `herald keys` reads it: DIR/secret.key (the 2,048 octets of secret.c) and
# DIR/secret.key.irk (its IRK), mode 0600, made from secret.c itself by the host's C compiler.
zephyr_key_file() {
  local dir=$1 key=$1/secret.key
  [ -f "$key" ] && [ -f "$key.irk" ] && [ "$key" -nt Firmware/Wearable/secret.c ] && return
  local tool=$dir/write-key
  printf '%s\n' '#include <stdio.h>' '#include "secret.c"' \
    'int main(int argc, char **argv) { FILE *k = fopen(argv[1], "wb"), *i = fopen(argv[2], "wb");' \
    '  return !(k && i && fwrite(wearable_secret_key(), 1, 2048, k) == 2048 && fwrite(wearable_irk(), 1, 16, i) == 16' \
    '           && fclose(k) == 0 && fclose(i) == 0); }' |
    cc -x c -I Firmware/Wearable - -o "$tool" || zephyr_fail "could not build the key writer"
  rm -f "$key" "$key.irk"
  (umask 077; "$tool" "$key" "$key.irk") || zephyr_fail "could not write $key"
  chmod 600 "$key" "$key.irk"
}

# `LABEL flash=N ram=N`. ARM: the linker's memory-usage report of Zephyr's link (FLASH and SRAM used,
# the whole image: controller, kernel, our host), kept in memory-usage.txt for builds that did not
# relink. nrf52_bsim: a Linux program, whose FLASH and SRAM regions do not exist; its figures are the
# program's own sections (`size`: text, and data + bss), x86-32 code with the simulated board's
# hardware models and BabbleSim's libraries in it, so they are no chip's figures: the ARM builds' are.
zephyr_report_size() {
  local label=$1 board=$2 dir=$3 flash ram
  if [ "$board" = nrf52_bsim ]; then
    read -r flash ram < <(size "$dir/zephyr/zephyr.exe" | awk 'NR == 2 { print $1, $2 + $3 }')
    echo "$label flash=$flash ram=$ram (nrf52_bsim: the Linux program's text and data+bss, not a chip's)"
    return
  fi
  if grep -q 'FLASH:' "$dir/build.log"; then grep -E '^ *(FLASH|SRAM):' "$dir/build.log" > "$dir/memory-usage.txt"; fi
  flash=$(zephyr_bytes FLASH "$dir/memory-usage.txt")
  ram=$(zephyr_bytes SRAM "$dir/memory-usage.txt")
  echo "$label flash=$flash ram=$ram"
}

# Octets used in REGION of a memory-usage report (`  FLASH:  98264 B  1 MB  9.37%`).
zephyr_bytes() {
  awk -v r="$1:" '$1 == r { n = $2; u = $3; if (u == "KB") n *= 1024; else if (u == "MB") n *= 1048576; print n; exit }' "$2"
}

# Tools/firmware run ROLE@nrf52_bsim: the app on a simulated radio (Tools/lib/chip_radio.py).
run_zephyr_image() {
  local label=$1 role=${1%@*} board=${1#*@}
  [ "$board" = nrf52_bsim ] || zephyr_fail "$label: only nrf52_bsim runs here (a real board is flashed: herald flash --hex .build/firmware/zephyr/$board/$role/zephyr/zephyr.hex)"
  build_zephyr_image "$label"
  # shellcheck disable=SC1091
  . Tools/lib/env.sh
  herald_ensure_venv
  exec "$ROOT/.venv/bin/python" Tools/lib/chip_radio.py --role "$role" --app "$OUT_ROOT/zephyr/$board/$role/zephyr/zephyr.exe"
}
