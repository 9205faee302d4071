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

# Copies the `.bin` inputs of corpus/TARGET (not their `.json` metadata) into DIR.
seed_dir() {
    local target=$1 dir=$2
    mkdir -p "$dir"
    if compgen -G "corpus/$target/*.bin" >/dev/null; then
        cp corpus/"$target"/*.bin "$dir"/
    fi
}
