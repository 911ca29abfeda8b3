// libFuzzer target: HCI event decoding (Core 5.4 Vol 4 Part E 5.4.4, 7.7): the event packet, every
// event and LE subevent parser, both advertising report iterators and the return parameters of every
// command we send. Built by Tools/fuzz; host-only code.
// Input: one event packet without its H4 indicator (code, length, parameters). Every parser is tried
// on the parameters whatever the code, to reach them all.
// Invariants: no trap or over-read; the packet's parameters are exactly what the length octet says;
// report iterators yield at most Num_Reports reports with data inside the event and end by
// themselves; Number Of Completed Packets visits exactly its entries with 12-bit handles.
import BluetoothHost

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

func returnParameters<C: HCICommand>(_ command: C.Type, _ p: Span<UInt8>) {
    _ = try? C.ReturnParameters(parsing: p)
}

func allReturnParameters(_ p: Span<UInt8>) {
    returnParameters(HCILEEncrypt.self, p)
    returnParameters(HCILERand.self, p)
    returnParameters(HCILEReadBufferSize.self, p)
    returnParameters(HCILEReadBufferSizeV2.self, p)
    returnParameters(HCILEReadLocalSupportedFeatures.self, p)
    returnParameters(HCILEReadMaximumDataLength.self, p)
    returnParameters(HCILEReadSuggestedDefaultDataLength.self, p)
    returnParameters(HCILESetDataLength.self, p)
    returnParameters(HCIReadBDADDR.self, p)
    returnParameters(HCIReadBufferSize.self, p)
    returnParameters(HCIReadLocalSupportedCommands.self, p)
    returnParameters(HCIReadLocalSupportedFeatures.self, p)
    returnParameters(HCIReadLocalVersionInformation.self, p)
    returnParameters(HCIReadRSSI.self, p)
    returnParameters(ZephyrReadStaticAddresses.self, p)
    returnParameters(ZephyrReadSupportedCommands.self, p)
    returnParameters(ZephyrReadTxPower.self, p)
    returnParameters(ZephyrReadVersionInformation.self, p)
    returnParameters(ZephyrWriteTxPower.self, p)
}

func leSubevents(_ p: Span<UInt8>, subevent: UInt8) {
    _ = try? HCILEConnectionCompleteEvent(parsing: p)
    _ = try? HCILEEnhancedConnectionCompleteEvent(parsing: p, subevent: subevent)
    _ = try? HCILEConnectionUpdateCompleteEvent(parsing: p)
    _ = try? HCILEDataLengthChangeEvent(parsing: p)
    _ = try? HCILEAdvertisingSetTerminatedEvent(parsing: p)
    if var reports = try? HCILEAdvertisingReportEvent(parsing: p) {
        let n = reports.numberOfReports
        var seen = 0
        var total = 0
        var calls = 0
        while true {
            // A report with a bad value costs only itself (the iteration goes on); one cut short, or
            // bytes after the last, end it (`isFinished`). Each call reads a report or ends.
            calls += 1
            check(calls <= n + 1, "the iteration ends by itself")
            let next: AdvertisingReport?
            do { next = try reports.next() } catch { if reports.isFinished { break } else { continue } }
            guard let r = next else { break }
            seen += 1
            total += r.data.count
            check(r.data.count <= 31, "legacy report data ≤ 31")
            check(seen <= n, "no more than Num_Reports")
        }
        check(total <= p.count, "report data within the event")
        check((try? reports.next()) == nil, "iteration stays ended")
    }
    if var reports = try? HCILEExtendedAdvertisingReportEvent(parsing: p) {
        let n = reports.numberOfReports
        var seen = 0
        var total = 0
        var calls = 0
        while true {
            // A report with a bad value costs only itself (the iteration goes on); one cut short, or
            // bytes after the last, end it (`isFinished`). Each call reads a report or ends.
            calls += 1
            check(calls <= n + 1, "the iteration ends by itself")
            let next: AdvertisingReport?
            do { next = try reports.next() } catch { if reports.isFinished { break } else { continue } }
            guard let r = next else { break }
            seen += 1
            total += r.data.count
            check(r.data.count <= 255, "extended report data ≤ 255")
            check(seen <= n, "no more than Num_Reports")
        }
        check(total <= p.count, "report data within the event")
        check((try? reports.next()) == nil, "iteration stays ended")
    }
}

func fuzzOne(_ input: Span<UInt8>) {
    guard let event = try? HCIEventPacket(parsing: input) else {
        if input.count >= 2 { check(input.count != 2 + Int(input[1]), "a packet of the declared length parses") }
        return
    }
    let p = event.parameters
    check(p.count == input.count - 2 && p.count == Int(input[1]), "parameters are exactly the declared length")

    if let complete = try? HCICommandCompleteEvent(parsing: p) {
        check(complete.returnParameters.count <= max(0, p.count - 4), "return parameters within the event")
        allReturnParameters(complete.returnParameters)
    }
    _ = try? HCICommandStatusEvent(parsing: p)
    _ = try? HCIDisconnectionCompleteEvent(parsing: p)
    _ = try? HCIHardwareErrorEvent(parsing: p)
    _ = try? HCIDataBufferOverflowEvent(parsing: p)
    _ = HCIVendorEvent(parsing: p).isZephyrFatal
    if let completed = try? HCINumberOfCompletedPacketsEvent(parsing: p) {
        check(1 + 4 * completed.count == p.count, "entries fill the event")
        var visited = 0
        completed.forEach { handle, _ in
            check(handle <= 0x0FFF, "12-bit handle")
            visited += 1
        }
        check(visited == completed.count, "every entry visited")
    }
    if let meta = try? HCILEMetaEvent(parsing: p) {
        check(meta.parameters.count == p.count - 1, "subevent parameters")
        leSubevents(meta.parameters, subevent: meta.subevent)
    }
    allReturnParameters(p)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
