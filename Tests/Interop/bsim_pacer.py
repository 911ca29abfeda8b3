#!/usr/bin/env python3
"""A BabbleSim device that keeps simulated time from running faster than wall-clock time, and never
lets it catch up.

Why not BabbleSim's own `bs_device_handbrake`: it stalls the simulation every 50 ms of simulated time
until wall-clock time reaches an *absolute* schedule (start + simulated time). Whenever the simulation
falls behind that schedule (EDTT stops it while its Python thinks; a loaded machine), the handbrake
does not stall at all until it has caught up, and within each 50 ms poke the simulation runs free. A
host outside the simulation (ours, on a controller's pty) then sees simulated time race: in a run of
EDTT's GATT tests beside two busy loops the simulation was up to 1.03 s behind the schedule (median
0.20 s) and 50 ms of it passed in as little as 8.5 ms of wall-clock time (10th percentile 27 ms). A
response EDTT waits 100 ms (simulated) for then has a few milliseconds of wall-clock time, and a host
that the scheduler leaves waiting that long fails the test (docs/edtt.md).

This pacer stalls every `--poke` microseconds of simulated time (2.5 ms by default) until wall-clock
time has caught up with it; when the simulation is more than `--slack` behind (5 ms by default), that
time is given up, not made up. So no stretch of simulated time runs more than a poke plus the slack
ahead of the wall clock's pace, and a host's latency in milliseconds is about what the simulated
devices see.

The phy protocol is libPhyComv1's base protocol (BabbleSim base, bs_pc_base.c / bs_pc_base_types.h):
the device opens /tmp/bs_$USER/<sim>/<phy>.d<N>.ptd for reading, then .dtp for writing, sends
PB_MSG_WAIT (0x01, uint32) followed by the packed end time (uint64 us), and reads PB_MSG_WAIT_END
(0x81) when the simulation has reached it, or PB_MSG_DISCONNECT (0xFFFF) when it ends.

usage: bsim_pacer.py -s SIM_ID -d DEVICE [--phy 2G4] [--poke US] [--slack US] [--ratio R]
"""
import argparse
import getpass
import os
import struct
import time

PB_MSG_WAIT = 0x01
PB_MSG_WAIT_END = 0x81
PB_MSG_DISCONNECT = 0xFFFF


def fifo(path: str) -> None:
    try:
        os.mkfifo(path, 0o770)
    except FileExistsError:
        pass


def read_exact(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data


def pace(sim: str, device: int, phy: str = "2G4", poke_us: int = 2500, ratio: float = 1.0,
         slack_us: int = 5000) -> tuple[int, float]:
    """Runs until the phy ends the simulation; returns how many pokes stalled and the wall-clock
    seconds the simulation fell behind and did not make up (for the log)."""
    user = os.environ.get("USER") or getpass.getuser()
    folder = f"/tmp/bs_{user}/{sim}"
    os.makedirs(folder, exist_ok=True)
    ptd, dtp = f"{folder}/{phy}.d{device}.ptd", f"{folder}/{phy}.d{device}.dtp"
    fifo(ptd)
    fifo(dtp)
    # The phy opens ptd for writing first, then dtp for reading: the same order here, or both block.
    from_phy = os.open(ptd, os.O_RDONLY)
    to_phy = os.open(dtp, os.O_WRONLY)
    end = 0
    mark_sim, mark_wall = 0, None   # where the schedule starts: simulated us, wall-clock s
    stalls, lost = 0, 0.0
    try:
        while True:
            end += poke_us
            os.write(to_phy, struct.pack("<IQ", PB_MSG_WAIT, end))
            header = read_exact(from_phy, 4)
            if len(header) < 4 or struct.unpack("<I", header)[0] != PB_MSG_WAIT_END:
                return stalls, lost
            now = time.monotonic()
            if mark_wall is None:
                mark_sim, mark_wall = end, now
                continue
            behind = now - (mark_wall + (end - mark_sim) / 1e6 / ratio)
            if behind < 0:
                time.sleep(-behind)
                stalls += 1
            elif behind > slack_us / 1e6:
                # Far behind (EDTT thinking, a starved CPU): start again from here rather than let
                # the simulation run free to catch up.
                lost += behind
                mark_sim, mark_wall = end, now
            # Else a little behind (a sleep that overslept, a late wake-up): run on and catch up, or
            # those fractions of a millisecond, lost at every stall, would slow the simulation down
            # (measured: notifications 2.5 % slower than with the handbrake).
    finally:
        try:
            os.write(to_phy, struct.pack("<I", PB_MSG_DISCONNECT))
        except OSError:
            pass
        os.close(to_phy)
        os.close(from_phy)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-s", "--sim-id", required=True)
    ap.add_argument("-d", "--device", type=int, required=True, help="this device's number in the phy")
    ap.add_argument("--phy", default="2G4", help="the phy's id (-p of bs_2G4_phy_v1; 2G4 by default)")
    ap.add_argument("--poke", type=int, default=2500, help="simulated microseconds between stalls")
    ap.add_argument("--slack", type=int, default=5000, help="wall-clock microseconds behind that are caught up")
    ap.add_argument("--ratio", type=float, default=1.0, help="simulated / wall-clock time at most")
    a = ap.parse_args()
    stalls, lost = pace(a.sim_id, a.device, a.phy, a.poke, a.ratio, a.slack)
    print(f"bsim_pacer: simulation ended; {stalls} stalls, {lost:.1f} s behind wall-clock time not made up",
          flush=True)


if __name__ == "__main__":
    main()
