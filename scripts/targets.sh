# Shared by the fuzz scripts (sourced, not run).
#
# A fuzz target is named after the system it fuzzes, with `-` written `_` (`two_pc` fuzzes
# `two-pc`); `sim_target` is the flagship system. Override with SIM_SYSTEM.
system_of() {
    if [ -n "${SIM_SYSTEM:-}" ]; then echo "$SIM_SYSTEM"; return; fi
    case $1 in
        sim_target) echo two-pc ;;
        *) echo "${1//_/-}" ;;
    esac
}

# The fuzz target of a system: the inverse of system_of.
target_of() {
    case $1 in
        two-pc) echo sim_target ;;
        *) echo "${1//-/_}" ;;
    esac
}

# Copies the passing `.bin` inputs of corpus/TARGET (not their `.json` metadata) into DIR: a
# hunt starts from the seed corpus only. Entries that record a failure stay regression tests
# (`cargo test` replays them) but would hand the fuzzer its bug before it searched.
seed_dir() {
    local target=$1 dir=$2 bin meta
    mkdir -p "$dir"
    for bin in corpus/"$target"/*.bin; do
        [ -e "$bin" ] || continue
        meta=${bin%.bin}.json
        if [ -e "$meta" ] && ! grep -Eq '"class": *"pass"' "$meta"; then
            continue
        fi
        cp "$bin" "$dir"/
    done
}
