"""Which optional features of the core a built image links, from its symbols. Each feature has a
witness: a function only that feature's code calls, kept out of line (`@inline(never)`, or large
enough that link-time optimisation leaves it so), so its symbol is in the image exactly when the
feature's code is. An application leaves a feature out by its type (a static property or type
parameter that is a constant after specialisation); this says whether the code really went.
Usage: features.py ELF [--nm LLVM-NM] [--demangle SWIFT-DEMANGLE] [--expect-absent NAME,...]
(Tools/firmware build prints its line; Tests/Interop/test_firmware_features.py checks it). With
--expect-absent, exits 1 naming each of those features that is linked."""
import argparse
import subprocess
import sys

# Feature, what chooses it, and the substrings of demangled symbols that witness it.
FEATURES = [
    ("scanning", "LEApplication.scans", ["LEStack.hostDidReceive(advertisingReport:)"]),
    ("central", "LEApplication.connectsAsCentral", ["LEStack.endAttempt(", "StackControlOf.cancelAttempt("]),
    ("inbound-policy", "LEApplication.inboundLinks", ["LEStack.inboundLinksInTable()"]),
    ("phy-requests", "LEApplication.asksForLE2MPHY", ["LEStack.requestPHY(handle:)"]),
    ("phy-updates", "LEApplication.tracksPHYUpdates", ["LEStack.phyUpdated("]),
    ("sparse-tables", "LEApplication.GATTHandles (HeraldServerOffer.GATTHandles)", ["GATTConstantTable.firstIndex("]),
    ("enable-queue", "every HeraldAdvertiser (not optional)", ["AdvertisingEnableQueue.answered("]),
    # With no LE Encrypt (`usesLEEncrypt` false) softwareAddress has one caller and is inlined; the
    # address's helpers (only rotation uses them) still witness it.
    ("rotation", "HeraldPeripheralDelegate.rotatesAddress",
     ["HeraldAdvertiser.softwareAddress(prand:)", "ResolvablePrivateAddress."]),
    ("signals", "HeraldPeripheralDelegate.receivesSignals", ["SignalMessage.init(parsing:)"]),
    ("prepare-queue", "HeraldServerOffer.PrepareQueue", ["ATTPreparedWrites<"]),
]


def symbols(elf, nm, demangle):
    raw = subprocess.run([nm, elf], capture_output=True, text=True, check=True).stdout
    names = "\n".join(line.split(maxsplit=2)[-1] for line in raw.splitlines() if line.strip())
    return subprocess.run([demangle, "--simplified"], input=names, capture_output=True, text=True,
                          check=True).stdout.splitlines()


def linked(names):
    return [f for f, _, witnesses in FEATURES if any(w in n for w in witnesses for n in names)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("elf")
    p.add_argument("--nm", default="llvm-nm")
    p.add_argument("--demangle", default="swift-demangle")
    p.add_argument("--label", default=None)
    p.add_argument("--expect-absent", default="")
    a = p.parse_args()
    present = linked(symbols(a.elf, a.nm, a.demangle))
    absent = [f for f, _, _ in FEATURES if f not in present]
    label = a.label or a.elf
    print(f"{label}: features linked: {' '.join(present) or '-'}; left out: {' '.join(absent) or '-'}")
    unexpected = [f for f in a.expect_absent.split(",") if f and f in present]
    for f in unexpected:
        chooser = next(c for name, c, _ in FEATURES if name == f)
        print(f"{label}: {f} is linked, but the image's type leaves it out ({chooser})", file=sys.stderr)
    sys.exit(1 if unexpected else 0)


if __name__ == "__main__":
    main()
