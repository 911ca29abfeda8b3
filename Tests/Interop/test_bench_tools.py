"""The benchmark tools measure what they claim: Tools/bench-uart's pacing proxy never lets data
through faster than the configured baud and loses or reorders nothing, `herald bench-serve` delivers
every notification at the requested size, and Tools/bench-vs-bumble reads the same 200-octet value from both servers."""
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "Tools" / "bench"


def run_json(args, timeout=180):
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_bench_uart_is_bounded_by_the_paced_line(herald_bin):
    # 115200 baud: slow enough that the line, not the hosts, must be the limit.
    r = run_json([str(BENCH / "bench_uart.py"), herald_bin, "--baud", "115200", "--notifications", "150", "--size", "100"])
    # Every octet delivered, in order: 150 notifications of 100 octets, each the one bench-serve
    # numbered for its place.
    assert r["notifications"] == 150 and r["payload"] == 100 and r["misdelivered"] == 0, r
    # Above the ideal would mean the proxy leaks bytes faster than the baud. How close to the ideal
    # it gets is the benchmark's figure (Tools/bench-uart), not a pass/fail bound.
    assert r["fractionOfIdeal"] <= 1.02
    # Every notification crossed the proxy: 150 x (100 + 3 + 4 + 4 fragments x 5) octets at least.
    assert r["proxyBytes"]["to-controller"] >= 150 * 127


def test_bench_vs_bumble_reads_both_servers(herald_bin):
    r = run_json([str(BENCH / "bench_vs_bumble.py"), herald_bin, "--reads", "20", "--notifications", "50"])
    for name in ("herald", "bumble"):
        assert r[name]["reads"] == 20 and r[name]["readsPerSecond"] > 0
        assert r[name]["notifications"] == 50
        assert r[name]["mtu"] == 247


def test_pace_is_read_from_the_shortest_advert_gaps():
    # One advertiser every 200 ms + advDelay (0-10 ms) of simulated time, heard with misses (a gap
    # of two or three events) and events heard twice (a gap of 1 ms), on a radio at `true_pace`.
    sys.path.insert(0, str(BENCH))
    import pace
    import random
    rnd = random.Random(7)
    for true_pace in (1.0, 0.68, 0.5):
        gaps = []
        for _ in range(400):
            events = rnd.choice((1, 1, 1, 2, 3))
            gaps.append(sum(0.2 + rnd.uniform(0, 0.01) for _ in range(events)) / true_pace)
            if rnd.random() < 0.1:
                gaps.append(0.001)
        assert abs(pace.pace(gaps, 0.2) - true_pace) < 0.02 * true_pace, true_pace
    # Too few adverts to tell is said, not guessed.
    assert pace.pace([0.2] * 5, 0.2) is None


def test_only_resolvable_private_addresses_count_as_wearables():
    sys.path.insert(0, str(BENCH))
    import pace
    # HCI order: the most significant octet last. 0x4X: resolvable private; 0xCX: static (the beacon,
    # the phones); 0x0X: non-resolvable private.
    assert pace.is_resolvable_private(bytes([1, 2, 3, 4, 5, 0x45]))
    assert not pace.is_resolvable_private(bytes([1, 0, 0, 0, 0, 0xC1]))
    assert not pace.is_resolvable_private(bytes([1, 2, 3, 4, 5, 0x05]))


def test_advertising_reports_tell_adv_ind_from_other_reports(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import struct
    import snoop
    address = bytes([1, 2, 3, 4, 5, 0x45])

    def legacy(event_type):  # LE Advertising Report, one report, no data, RSSI
        body = bytes([0x02, 1, event_type, 0x01]) + address + bytes([0, 0xC4])
        return bytes([0x04, 0x3E, len(body)]) + body

    def extended(event_type):  # LE Extended Advertising Report, one report, fields after the address zeroed
        body = bytes([0x0D, 1]) + struct.pack("<H", event_type) + bytes([0x01]) + address + bytes(16)
        return bytes([0x04, 0x3E, len(body)]) + body

    packets = [legacy(0x00), legacy(0x04), extended(0x0013), extended(0x0001), extended(0x0008),
               extended(0x001B), bytes([0x04, 0x0E, 4, 1, 0x03, 0x0C, 0])]
    path = tmp_path / "reports.btsnoop"
    with open(path, "wb") as f:
        f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        for i, p in enumerate(packets):
            f.write(struct.pack(">IIIIq", len(p), len(p), 3, 0, snoop.UNIX_EPOCH * 1_000_000 + i) + p)
    reports = list(snoop.advertising_reports(path))
    # ADV_IND, SCAN_RSP; extended: legacy ADV_IND, Bumble's ADV_IND, a scan response, a legacy scan
    # response (0x001B); the Command Complete is no report.
    assert [(a, adv_ind) for _, a, adv_ind in reports] == [
        (address, True), (address, False), (address, True), (address, True), (address, False), (address, False)]


def test_attempt_waits_match_each_link_to_its_attempt_and_the_targets_last_advert(tmp_path):
    sys.path.insert(0, str(BENCH))
    import struct
    import attempt_waits
    import snoop
    target, other = bytes([1, 2, 3, 4, 5, 0x45]), bytes([6, 6, 6, 6, 6, 0x46])

    def advert(address):  # LE Advertising Report: ADV_IND, no data
        body = bytes([0x02, 1, 0x00, 0x01]) + address + bytes([0, 0xC4])
        return 3, bytes([0x04, 0x3E, len(body)]) + body

    def create(address):  # LE Create Connection, sent
        body = bytes([0x60, 0, 0x60, 0, 0, 0x01]) + address + bytes([0x01, 6, 0, 12, 0, 0, 0, 200, 0, 0, 0, 0, 0])
        return 2, bytes([0x01, 0x0D, 0x20, len(body)]) + body

    def complete(address, status, role=0):  # LE Connection Complete, central unless role 1
        body = bytes([0x01, status, 1, 0, role, 0x01]) + address + bytes([12, 0, 0, 0, 200, 0, 0])
        return 3, bytes([0x04, 0x3E, len(body)]) + body

    records = [(0, advert(target)), (150, advert(other)), (190, create(target)), (200, advert(target)),
               (210, complete(other, 0x00, role=1)), (230, complete(target, 0x00)), (400, create(other)), (900, complete(other, 0x02)),
               (1000, create(target)), (1205, complete(target, 0x00))]
    path = tmp_path / "attempts.btsnoop"
    with open(path, "wb") as f:
        f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        for ms, (flags, p) in records:
            f.write(struct.pack(">IIIIq", len(p), len(p), flags, 0, snoop.UNIX_EPOCH * 1_000_000 + ms * 1000) + p)
    waits = [(round(p * 1000), round(w * 1000)) for p, w in attempt_waits.attempt_waits(path)]
    # The first attempt 190 ms after the target's advert, up 40 ms later (not at 210 ms: that is a
    # link another central made to us); the failed one (0x02) is no link; the third 800 ms after the target's last advert (at 200 ms), up 205 ms later.
    assert waits == [(190, 40), (800, 205)]


def test_holds_tosses_the_pairs_coin_as_the_central_does():
    sys.path.insert(0, str(BENCH))
    import holds
    # SensorRotationTests' addresses: 40:11:22:33:44:01 waits for the peer 4C:11:22:33:44:01 and
    # D0:11:22:33:44:01 connects to it; of any two addresses exactly one waits.
    peer = "4C:11:22:33:44:01"
    assert holds.waits("40:11:22:33:44:01", peer)
    assert not holds.waits("D0:11:22:33:44:01", peer)
    assert not holds.waits(peer, "40:11:22:33:44:01")
    import random
    rnd = random.Random(3)
    for _ in range(200):
        a, b = (":".join(f"{rnd.randrange(256):02X}" for _ in range(6)) for _ in range(2))
        if a != b:
            assert holds.waits(a, b) != holds.waits(b, a), (a, b)
    # A waiter held 1.6 s whose connector read it over the waiter's own link; a static peer is no pair.
    own = {0: "40:11:22:33:44:01", 1: peer}
    text = ("  wearable 1: wearable 0: first advert -> didRead 1.90 s\n"
            "  w0 <- 4C:11:22:33:44:01: heard 1.60 s, connect 0.20 s (1 attempt), discover\n"
            "  w0 <- C1:00:00:00:00:01: heard 1.50 s, connect 0.20 s (1 attempt), discover\n")
    roles, held, lines = holds.analyse(text, own)
    assert roles == {"waiter": 1, "static": 1} and held == {"waiter": 1, "static": 1}
    assert lines == ["w0 waited 1.60 s for w1; w1 read w0 at 1.9 s over inbound"]


def test_the_bench_median_takes_the_middle_two_of_an_even_count():
    sys.path.insert(0, str(BENCH))
    import wearables
    assert wearables.median_and_worst([3.0, 1.0, 2.0, 10.0]) == (2.5, 10.0)
    assert wearables.median_and_worst([0.5]) == (0.5, 0.5)
    assert wearables.median_and_worst([]) == (None, None)
