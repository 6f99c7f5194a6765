#!/usr/bin/env bash
# Two hosts on one machine, for multi-host MPI runs and tests: network namespaces NAME-a
# (10.250.0.1) and NAME-b (10.250.0.2) joined only by one link, a veth pair or an emulated link
# with one-way latency and bandwidth (build/benchmarks/link_emulator, or $LINK_EMULATOR; this
# kernel has no netem). Needs root and iproute2. Several NAMEs may be up at once.
# usage: tools/two_hosts.sh up NAME [--link latency=1ms,bandwidth=1gbit[,mtu=65000]]
#        tools/two_hosts.sh down NAME               removes it all; kills what still runs there
#        tools/two_hosts.sh mpirun NAME [mpirun args...]
#        tools/two_hosts.sh hostfile NAME A B >FILE  a hostfile: A slots on NAME-a, B on NAME-b
#            (into a file: Open MPI finds no nodes in --hostfile <(...))
#        tools/two_hosts.sh link NAME down|up       cuts the link (both ends down) / restores it
#        tools/two_hosts.sh exec HOST COMMAND...    runs COMMAND on HOST (NAME-a or NAME-b)
#        tools/two_hosts.sh agent HOST REMOTE-COMMAND...   Open MPI's rsh agent (below)
# e.g.   tools/two_hosts.sh up t && tools/two_hosts.sh mpirun t --host t-a:1,t-b:2 -np 3 prog
# NAME: up to 9 letters, digits or _. A host entered through this script has its namespace's
# name as hostname (own UTS namespace), so Open MPI sees two nodes; PIDs and files are shared.
# mpirun runs tools/mpirun.sh on NAME-a with --mca plm_rsh_agent "<this script> agent" (Open MPI
# splits the value at spaces, so an agent with an argument works; hence no spaces or ':' in this
# script's path), --mca btl tcp,vader,self and 10.250.0.0/24 for btl_tcp_if_include and
# oob_tcp_if_include (Open MPI refuses a --mca given twice: do not repeat these), and
# --bind-to none (each host would bind its first rank to core 0: both on the same core; a later
# --bind-to wins).
# agent runs a command as ssh would: the words joined into one shell command, run by the login
# shell from $HOME with a fresh environment (so ranks on NAME-b see a variable only through
# mpirun -x VAR, as on real hosts); a HOST that is not up gets ssh's "No route to host", 255.
# link down: both ends' interfaces go down (the emulator also drops what it holds); TCP
# connections survive and resume after `link up`, within TCP's retransmission backoff.
# --link: latency is one way (ns/us/ms/s), bandwidth in bit/kbit/mbit/gbit; the TAPs' MTU is
# 65000 so that a 400 KB message is 7 frames (the emulator's CPU goes per frame). State (the
# emulator's pid and log) is under /run/stalesgd-two-hosts/NAME/.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
tools=$(dirname "$self")
state_root=/run/stalesgd-two-hosts
emulator=${LINK_EMULATOR:-$(dirname "$tools")/build/benchmarks/link_emulator}

fail() { echo "tools/two_hosts.sh: $*" >&2; exit 1; }
usage() {
  echo "tools/two_hosts.sh: $*; usage: tools/two_hosts.sh up|down|mpirun|hostfile|link|exec|agent ... (see its header)" >&2
  exit 2
}

# NAME must leave room for "tap-NAME-a" in Linux's 15-character interface names, and has no
# '-' so that a host name splits back into NAME and its side unambiguously.
check_name() {
  [[ ${1:-} =~ ^[A-Za-z0-9_]+$ ]] || usage "NAME '${1:-}' must be letters, digits or _"
  [ ${#1} -le 9 ] || fail "NAME '$1' is too long: at most 9 characters (interface tap-$1-a must fit Linux's 15)"
}

# A host this script made: NAME-a or NAME-b of a NAME that is up.
is_host() {
  [[ $1 =~ ^([A-Za-z0-9_]{1,9})-[ab]$ ]] && [ -e "$state_root/${BASH_REMATCH[1]}/up" ] &&
    [ -e "/run/netns/$1" ]
}

require_up() {
  [ -e "$state_root/$1/up" ] || fail "$1 is not up: run 'tools/two_hosts.sh up $1' first"
}

# Runs argv in HOST's network namespace under HOST as hostname (a UTS namespace of its own).
in_host() {
  local host=$1
  shift
  exec ip netns exec "$host" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

cmd_up() {
  local name=${1:-} spec="" latency="" bandwidth="" mtu=65000
  shift || true
  check_name "$name"
  case "${1:-}" in
    "") ;;
    --link) [ $# -eq 2 ] && [ -n "$2" ] || usage "--link needs one SPEC"; spec=$2 ;;
    *) usage "unknown argument '$1' to up" ;;
  esac
  if [ -n "$spec" ]; then
    local kv kvs
    IFS=, read -ra kvs <<<"$spec"
    for kv in "${kvs[@]}"; do
      case "$kv" in
        latency=*) latency=${kv#*=}; [[ $latency =~ ^[0-9]+(\.[0-9]+)?(ns|us|ms|s)$ ]] ||
          usage "latency '$latency': use e.g. 1ms or 500us" ;;
        bandwidth=*) bandwidth=${kv#*=}; [[ $bandwidth =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$ ]] ||
          usage "bandwidth '$bandwidth': use e.g. 100mbit or 1gbit" ;;
        mtu=*) mtu=${kv#*=}; [[ $mtu =~ ^[0-9]+$ ]] && [ "$mtu" -ge 1280 ] && [ "$mtu" -le 65521 ] ||
          usage "mtu '$mtu': use 1280 to 65521" ;;
        *) usage "--link '$spec': use latency=1ms,bandwidth=1gbit (either key optional)" ;;
      esac
    done
    [ -x "$emulator" ] || fail "$emulator is not built: cmake --build build --target link_emulator"
  fi
  local a=$name-a b=$name-b state=$state_root/$name
  if [ -e "$state" ] || [ -e "/run/netns/$a" ] || [ -e "/run/netns/$b" ]; then
    fail "$name is already up: run 'tools/two_hosts.sh down $name' first"
  fi
  command -v ip >/dev/null 2>&1 ||
    fail "cannot create network namespaces here (no ip command): run as root with iproute2"
  local err
  if ! err=$(ip netns add "$a" 2>&1); then
    [ -e "/run/netns/$a" ] && fail "$name is already up: run 'tools/two_hosts.sh down $name' first"
    fail "cannot create network namespaces here (ip netns add: ${err//$'\n'/ }): run as root with iproute2"
  fi
  # From here on a failure leaves nothing behind.
  up_name=$name
  trap 'cmd_down "$up_name" >/dev/null 2>&1' EXIT
  mkdir -p "$state"
  ip netns add "$b"
  local if_a if_b
  if [ -z "$spec" ]; then
    echo veth >"$state/link"
    if_a=ve-$name-a if_b=ve-$name-b
    # Created straight into the namespaces: never visible (or colliding) on the machine.
    ip link add "$if_a" netns "$a" type veth peer name "$if_b" netns "$b"
  else
    echo emulator >"$state/link"
    if_a=tap-$name-a if_b=tap-$name-b
    local args=(--a "$if_a" --b "$if_b" --mtu "$mtu")
    [ -n "$latency" ] && args+=(--latency "$latency")
    [ -n "$bandwidth" ] && args+=(--bandwidth "$bandwidth")
    # Its own session: it outlives this script and the terminal, until `down`.
    setsid "$emulator" "${args[@]}" >"$state/emulator.out" 2>"$state/emulator.log" </dev/null &
    echo $! >"$state/emulator.pid"
    local pid=$! status=0
    for _ in $(seq 100); do
      grep -qx ready "$state/emulator.out" && break
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid" || status=$?
        fail "link emulator exited with status $status: $(tail -n 1 "$state/emulator.log")"
      fi
      sleep 0.05
    done
    grep -qx ready "$state/emulator.out" || fail "link emulator did not start within 5 s"
    ip link set "$if_a" netns "$a"
    ip link set "$if_b" netns "$b"
  fi
  ip -n "$a" link set lo up
  ip -n "$b" link set lo up
  ip -n "$a" addr add 10.250.0.1/24 dev "$if_a"
  ip -n "$b" addr add 10.250.0.2/24 dev "$if_b"
  ip -n "$a" link set "$if_a" up
  ip -n "$b" link set "$if_b" up
  touch "$state/up"  # what the other subcommands look for: not while `up` is half done
  trap - EXIT
}

# True while one of the pids runs (a zombie has exited: its parent may reap it late).
any_running() {
  local pid state
  for pid in "$@"; do
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
    [ -n "$state" ] && [ "$state" != Z ] && return 0
  done
  return 1
}

# SIGTERM to the pids, up to 2 s to exit, then SIGKILL.
stop_pids() {
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for _ in $(seq 20); do
    any_running "$@" || return 0
    sleep 0.1
  done
  kill -KILL "$@" 2>/dev/null || true
}

# Stops what runs in host $1 (but not this script or its callers), then removes the namespace.
remove_host() {
  local host=$1 keep=" " p=$$ pids=() pid
  [ -e "/run/netns/$host" ] || return 0
  while [ "$p" -gt 1 ]; do
    keep+="$p "
    p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2) || break
    [ -n "$p" ] || break
  done
  for pid in $(ip netns pids "$host" 2>/dev/null); do
    [[ $keep == *" $pid "* ]] || pids+=("$pid")
  done
  stop_pids "${pids[@]}"
  ip netns del "$host" 2>/dev/null || true
}

cmd_down() {
  local name=${1:-}
  check_name "$name"
  local state=$state_root/$name pid
  if [ -r "$state/emulator.pid" ]; then
    pid=$(cat "$state/emulator.pid")
    # Only if that pid is still our emulator (pids are reused).
    if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--a tap-$name-a "; then
      stop_pids "$pid"
    fi
  fi
  remove_host "$name-a"
  remove_host "$name-b"
  # Open MPI names its session directories after the host: these are NAME's alone, and a
  # killed mpirun leaves its own behind.
  rm -rf "$state" /tmp/ompi."$name"-[ab].* /dev/shm/vader_segment."$name"-[ab].*
  rmdir "$state_root" 2>/dev/null || true  # when no other NAME is up
}

cmd_link() {
  local name=${1:-} how=${2:-}
  check_name "$name"
  [[ $how == up || $how == down ]] || usage "link NAME down|up"
  require_up "$name"
  local prefix=ve
  if [ "$(cat "$state_root/$name/link")" = emulator ]; then
    prefix=tap
    # SIGUSR1: drop what is queued and all that comes; SIGUSR2: forward again.
    if [ "$how" = down ]; then kill -USR1 "$(cat "$state_root/$name/emulator.pid")"; fi
  fi
  ip -n "$name-a" link set "$prefix-$name-a" "$how"
  ip -n "$name-b" link set "$prefix-$name-b" "$how"
  if [ "$prefix" = tap ] && [ "$how" = up ]; then
    kill -USR2 "$(cat "$state_root/$name/emulator.pid")"
  fi
}

cmd_agent() {
  # ssh's options, as plm_rsh_args would pass them (e.g. -o ConnectTimeout=5), mean nothing here.
  while [[ ${1:-} == -* ]]; do
    case "$1" in
      -[BbcDEeFIiJLlmOopQRSWw]) shift 2 || break ;;
      *) shift ;;
    esac
  done
  local host=${1:-}
  shift || true
  if [ -z "$host" ] || ! is_host "$host"; then
    echo "ssh: connect to host $host port 22: No route to host" >&2
    exit 255
  fi
  # What sshd starts a command with: the login shell, from $HOME, a minimal environment.
  local shell home
  shell=$(getent passwd "$(id -u)" | cut -d: -f7)
  home=$(getent passwd "$(id -u)" | cut -d: -f6)
  in_host "$host" env -i HOME="${home:-/}" USER="$(id -un)" LOGNAME="$(id -un)" \
    SHELL="${shell:-/bin/sh}" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    sh -c 'cd 2>/dev/null || cd /; exec "$SHELL" -c "$0"' "$*"
}

cmd_mpirun() {
  local name=${1:-}
  shift || true
  check_name "$name"
  require_up "$name"
  in_host "$name-a" "$tools/mpirun.sh" --mca plm_rsh_agent "$self agent" \
    --mca btl tcp,vader,self --mca btl_tcp_if_include 10.250.0.0/24 \
    --mca oob_tcp_if_include 10.250.0.0/24 --bind-to none "$@"
}

cmd_hostfile() {
  [ $# -eq 3 ] && [[ $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ ]] || usage "hostfile NAME A B (slots on NAME-a and NAME-b)"
  check_name "$1"
  [ "$2" -gt 0 ] && echo "$1-a slots=$2"
  [ "$3" -gt 0 ] && echo "$1-b slots=$3"
  true
}

cmd_exec() {
  local host=${1:-}
  shift || true
  [ $# -gt 0 ] || usage "exec HOST COMMAND..."
  is_host "$host" || fail "no host '$host': 'tools/two_hosts.sh up NAME' makes NAME-a and NAME-b"
  in_host "$host" "$@"
}

[ $# -gt 0 ] || usage "no subcommand"
sub=$1
shift
case "$sub" in
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  link) cmd_link "$@" ;;
  agent) cmd_agent "$@" ;;
  mpirun) cmd_mpirun "$@" ;;
  hostfile) cmd_hostfile "$@" ;;
  exec) cmd_exec "$@" ;;
  *) usage "unknown subcommand '$sub'" ;;
esac
