"""reference_story.py: what the reference C++ wearable's log says it did with one address, and when a
payload it never read is its own doing. No radio: log lines as the reference prints them (runs of
test_chip.py on 2026-11-30: a read of the single-chip beacon, and a read broken by the reference's own
close of every link)."""
from reference_story import reference_story

BEACON = "CE:4F:43:41:45:42"
PAYLOAD = "30033a00040001e240100b486572616c642043616665"


def line(t, text):
    s, frac = divmod(t, 1)
    return (f"d_05: @00:00:{int(s):02d}.{round(frac * 1e6):06d}  [00:00:{int(s):02d}.000,000] \x1b[0m<dbg> "
            f"heraldlogger.log: Sensor,BLE.ConcreteBLEReceiver,{text}\x1b[0m\n")


def connected(t):
    return line(t, f"**************** Zephyr connection callback. Mac of connected: {BEACON} (random)")


def closed(t, reason="0x16 (22) We closed the connection ourselves"):
    return line(t, f"********** Zephyr disconnection callback. Mac of disconnected: {BEACON} (random)") + line(t, f"  {reason}")


DISCOVERED = "The GATT discovery procedure succeeded for 424541434fce"
READING = "    - FOUND Herald read characteristic. Reading."
DID_READ = f"sensor didRead: 42454143\ufffd\ufffd with payload: {PAYLOAD}"


def story(tmp_path, *lines, expected=(PAYLOAD,)):
    log = tmp_path / "cpp-wearable.log"
    log.write_text("".join(lines))
    s = reference_story(log, BEACON)
    return s, s.problem(set(expected))


def test_a_read_is_told_with_its_link(tmp_path):
    s, problem = story(tmp_path, connected(32.3), closed(34.2), connected(36.8), line(37.7, DISCOVERED),
                       line(37.7, READING), line(37.8, DID_READ), closed(38.1))
    assert problem is None and s.payloads == [PAYLOAD] and len(s.links) == 2 and s.discoveries == [37.7]


def test_a_read_broken_by_the_reference_itself_is_its_known_defect(tmp_path):
    for ending in (line(34.28, "GATT read error code: -107"), line(34.28, "has no payload data"), ""):
        s, problem = story(tmp_path, connected(33.2), line(34.28, DISCOVERED), line(34.28, READING), ending,
                           closed(34.29), connected(36.8), closed(39.4))
        assert problem is None and not s.payloads and len(s.broken_by_itself()) == 1, (ending, str(s))
    # A discovery its own close cut before the read began.
    s, problem = story(tmp_path, connected(33.2), line(34.28, DISCOVERED), closed(34.29))
    assert problem is None, str(s)


def test_what_would_be_ours_fails(tmp_path):
    # An empty read on a link the reference kept, and then ended by us.
    _, problem = story(tmp_path, connected(33.2), line(34.0, DISCOVERED), line(34.0, READING),
                       line(34.1, "has no payload data"), closed(36.0, "0x13 (19) remote disconnected from us"))
    assert problem and "not ended by the reference" in problem
    _, problem = story(tmp_path, connected(33.2), line(34.0, DISCOVERED), line(34.0, READING),
                       line(34.1, "has no payload data"))
    assert problem and "kept" in problem
    # No discovery ever succeeded: the reference never reached our payload characteristic.
    _, problem = story(tmp_path, connected(33.2), closed(34.2), connected(36.8), closed(39.4))
    assert problem == "no discovery of this address succeeded"
    # A payload that is not the beacon's.
    _, problem = story(tmp_path, connected(33.2), line(34.0, DISCOVERED), line(34.0, READING),
                       line(34.1, DID_READ.replace("0001e240", "0001e241")), closed(34.2))
    assert problem and "not expected" in problem


def identified(t, lsb_first):
    return (f"d_05: @00:00:{int(t):02d}.000000  [00:00:{int(t):02d}.000,000] \x1b[0m<dbg> heraldlogger.log: "
            f"herald,ConcreteBLEDatabase,New target identified: {lsb_first}\x1b[0m\n")


def listing(t, address):
    return (f"d_05: @00:00:{int(t):02d}.000000  [00:00:{int(t):02d}.000,000] \x1b[0m<dbg> heraldlogger.log: "
            f"heraldble,coordinationprovider, - {address.lower()}, state=0. Discovered, pseudoAddress=unset\x1b[0m\n")


def test_the_first_device_it_identified_and_never_listed_is_its_defect(tmp_path):
    s, problem = story(tmp_path, identified(17, "424541434fce"), identified(17, "1d1ab2a48876"),
                       listing(31, "76:88:a4:b2:1a:1d"))
    assert s.first_identified and not s.listed and problem is None, str(s)
    # Identified second, or listed, or linked and never discovered: ours to explain.
    for lines in ((identified(17, "1d1ab2a48876"), identified(17, "424541434fce")),
                  (identified(17, "424541434fce"), listing(31, BEACON)),
                  (identified(17, "424541434fce"), connected(32.0), closed(34.0))):
        _, problem = story(tmp_path, *lines)
        assert problem == "no discovery of this address succeeded", lines


def test_other_addresses_do_not_count(tmp_path):
    other = "The GATT discovery procedure succeeded for 1d1ab2a48876"
    s, problem = story(tmp_path, connected(33.2), line(34.0, other), line(34.0, READING),
                       line(34.1, "sensor didRead: 1d1ab2a4\ufffd with payload: 10033a"), closed(34.2))
    assert not s.reads and not s.discoveries and problem == "no discovery of this address succeeded"
