/// Bring-up: each step's command, what its answer teaches us, and the choice of identity address.
extension HCIHostOf {
    mutating func bringUpCompleted<D: HostDelegate, O: H4Output>(
        _ step: BringUpStep, status: HCIStatus, returnParameters: Span<UInt8>,
        now: UInt64, delegate: inout D, output: inout O
    ) {
        guard status == .success else {
            if step.isEssential {
                fail(.commandFailed(opcode(of: step), status), delegate: &delegate)
            } else {
                advance(from: step, now: now, delegate: &delegate, output: &output)
            }
            return
        }
        do throws(DecodeError) {
            try record(step, returnParameters)
        } catch {
            // Vendor answers are validated by exact length; a mismatch means "not Zephyr's layout".
            if step.isEssential {
                fail(.malformedResponse(opcode(of: step)), delegate: &delegate)
                return
            }
        }
        advance(from: step, now: now, delegate: &delegate, output: &output)
    }

    /// Stores what a successful step returned. The two command bitmaps are written with their
    /// flags rather than through `ControllerInfo`'s optional views, which would build the optional
    /// and copy it (see `ControllerInfo.supportedCommandsBitmap`).
    private mutating func record(_ step: BringUpStep, _ p: Span<UInt8>) throws(DecodeError) {
        switch step {
        case .reset, .setEventMask, .leSetEventMask, .leWriteSuggestedDefaultDataLength, .leSetRandomAddress:
            break
        case .leSetDefaultPHY:
            info.prefers2MPHY = true
        case .readLocalVersion:
            info.localVersion = try HCILocalVersionInformation(parsing: p)
        case .readLocalSupportedCommands:
            info.supportedCommandsBitmap = try HCISupportedCommands(parsing: p)
            info.hasSupportedCommands = true
        case .readLocalSupportedFeatures:
            info.lmpFeatures = try HCILMPFeatures(parsing: p)
        case .leReadBufferSizeV2:
            let b = try HCILEReadBufferSizeV2.ReturnParameters(parsing: p)
            info.aclDataPacketLength = b.leACLDataPacketLength
            info.aclDataPacketCount = UInt16(b.totalNumLEACLDataPackets)
        case .leReadBufferSize:
            let b = try HCILEReadBufferSize.ReturnParameters(parsing: p)
            info.aclDataPacketLength = b.leACLDataPacketLength
            info.aclDataPacketCount = UInt16(b.totalNumLEACLDataPackets)
        case .readBufferSize:
            let b = try HCIReadBufferSize.ReturnParameters(parsing: p)
            info.aclDataPacketLength = b.aclDataPacketLength
            info.aclDataPacketCount = b.totalNumACLDataPackets
            info.aclBuffersShared = true
        case .leReadLocalSupportedFeatures:
            info.leFeatures = try LEFeatures(parsing: p)
        case .readBDADDR:
            let a = try HCIReadBDADDR.ReturnParameters(parsing: p)
            info.publicAddress = a
            if !a.isZero {
                info.address = a
                info.addressType = .publicDevice
                info.addressSource = .publicAddress
            }
        case .leReadMaximumDataLength:
            info.maximumDataLength = try HCILEReadMaximumDataLength.ReturnParameters(parsing: p)
        case .zephyrReadVersionInformation:
            info.zephyrVersion = try ZephyrReadVersionInformation.ReturnParameters(parsing: p)
        case .zephyrReadSupportedCommands:
            info.listsZephyrReadStaticAddresses = try ZephyrReadSupportedCommands.ReturnParameters(parsing: p).readStaticAddresses
        case .zephyrReadStaticAddresses:
            let first = try ZephyrReadStaticAddresses.ReturnParameters.firstAddress(parsing: p)
            if info.addressSource != .publicAddress, let first,
                first.randomSubtype == RandomAddressSubtype.staticAddress {
                info.address = first
                info.addressType = .randomDevice
                info.addressSource = .zephyrStatic
            }
        }
    }

    /// Moves to the next step, or finishes bring-up.
    // Not inlined: a success, a refused informational step and a vendor command's timeout all
    // advance, and inlined each copied the next command's choice and the ready callback.
    @inline(never)
    mutating func advance<D: HostDelegate, O: H4Output>(
        from step: BringUpStep, now: UInt64, delegate: inout D, output: inout O
    ) {
        guard let next = step.next(info, configuration) else {
            state = .ready
            delegate.hostDidBecomeReady(info)
            return
        }
        if next == .leSetRandomAddress, info.addressSource == .generatedStatic {
            info.address = staticRandomAddress()
            info.addressType = .randomDevice
        }
        state = .bringingUp(next)
        do throws(CommandQueueError) {
            try issue(next, now: now, output: &output)
        } catch {
            // The queue is empty during bring-up, so this cannot happen; fail loudly rather than hang.
            fail(.commandFailed(opcode(of: next), .hardwareFailure), delegate: &delegate)
        }
    }

    /// Sends `step`'s command. Every step but Reset is its opcode (`opcode(of:)`) and at most a few
    /// fixed parameters, so all of them are encoded here into one packet and queued by one path:
    /// written per command type (a parameterless path for the reads, and an encoder and a generic
    /// enqueue for each command with parameters), the firmware image carried each.
    private mutating func issue<O: H4Output>(_ step: BringUpStep, now: UInt64, output: inout O) throws(CommandQueueError) {
        if step == .reset { return sendReset(now: now, output: &output) }
        let opcode = opcode(of: step)
        let packet = HCICommandPacket(opcode: opcode) { parameters in
            switch step {
            case .setEventMask: parameters.append(u64: HostEventMasks.events)  // HCISetEventMask
            case .leSetEventMask: parameters.append(u64: HostEventMasks.leEvents)  // HCILESetEventMask
            case .leWriteSuggestedDefaultDataLength:  // HCILEWriteSuggestedDefaultDataLength
                var (octets, time) = configuration.suggestedDataLength ?? (27, 328)
                if let max = info.maximumDataLength {
                    octets = min(octets, max.supportedMaxTxOctets)
                    time = min(time, max.supportedMaxTxTime)
                }
                parameters.append(u16: octets)
                parameters.append(u16: time)
            case .leSetRandomAddress: info.address.write(to: &parameters)  // HCILESetRandomAddress
            case .leSetDefaultPHY:  // HCILESetDefaultPHY(): All_PHYs 0, TX and RX 1M or 2M
                parameters.append(0x00)
                parameters.append(LEPHYPreference.le1MOr2M.rawValue)
                parameters.append(LEPHYPreference.le1MOr2M.rawValue)
            default: break  // the reads carry no parameters
            }
        }
        let timeout = opcode.isVendorSpecific ? configuration.vendorCommandTimeout : configuration.commandTimeout
        try commands.enqueue(packet: packet, tag: .bringUp, timeout: timeout)
        commands.pump(now: now, to: &output)
    }

    func opcode(of step: BringUpStep) -> HCIOpcode {
        switch step {
        case .reset: return HCIReset.opcode
        case .readLocalVersion: return HCIReadLocalVersionInformation.opcode
        case .readLocalSupportedCommands: return HCIReadLocalSupportedCommands.opcode
        case .readLocalSupportedFeatures: return HCIReadLocalSupportedFeatures.opcode
        case .setEventMask: return HCISetEventMask.opcode
        case .leSetEventMask: return HCILESetEventMask.opcode
        case .leReadBufferSizeV2: return HCILEReadBufferSizeV2.opcode
        case .leReadBufferSize: return HCILEReadBufferSize.opcode
        case .readBufferSize: return HCIReadBufferSize.opcode
        case .leReadLocalSupportedFeatures: return HCILEReadLocalSupportedFeatures.opcode
        case .readBDADDR: return HCIReadBDADDR.opcode
        case .leReadMaximumDataLength: return HCILEReadMaximumDataLength.opcode
        case .leWriteSuggestedDefaultDataLength: return HCILEWriteSuggestedDefaultDataLength.opcode
        case .leSetDefaultPHY: return HCILESetDefaultPHY.opcode
        case .zephyrReadVersionInformation: return ZephyrReadVersionInformation.opcode
        case .zephyrReadSupportedCommands: return ZephyrReadSupportedCommands.opcode
        case .zephyrReadStaticAddresses: return ZephyrReadStaticAddresses.opcode
        case .leSetRandomAddress: return HCILESetRandomAddress.opcode
        }
    }

    /// A static random address: the two most significant bits 0b11, and the random part neither all
    /// zeros nor all ones (Core 5.4 Vol 6 Part B 1.3.2.1). Generated once per host lifetime.
    mutating func staticRandomAddress() -> BDAddress {
        if let a = generatedAddress { return a }
        var a = BDAddress(bytes: configuration.randomAddressSeed)
        a.bytes[5] |= 0xC0
        // The random part (46 bits: octets 0-4 and the low six bits of octet 5) is all zeros when
        // the OR of its octets is 0, all ones when their AND, with the two top bits set, is 0xFF.
        var any = a.bytes[5] & 0x3F, all = a.bytes[5]
        for i in 0..<5 { any |= a.bytes[i]; all &= a.bytes[i] }
        if any == 0 || all == 0xFF { a.bytes[0] ^= 0x5A }
        generatedAddress = a
        return a
    }
}
