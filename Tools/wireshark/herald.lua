-- Herald for Wireshark: decodes the Herald proximity protocol in Bluetooth HCI captures (btsnoop
-- files from `herald ... --btsnoop FILE`, Android's btsnoop_hci.log, live HCI captures).
--
-- What it decodes, as this project's own decoders do (Sources/Herald):
--   * adverts: either Herald service UUID (the specification's 128-bit 428132af-... or the registered
--     16-bit 0xFCF6) and the pseudo device address (manufacturer data 0xFFFA or 0x05F1, 6 octets),
--     in LE Advertising Reports and LE Extended Advertising Reports;
--   * the payload read from the payload characteristic (3e98c0f8-...): Simple payload (0x10-0x17:
--     country, state, contact identifier and its short name, extended data), venue beacon payload
--     (0x30-0x37: location code, premises name) and herald-for-cpp's fixed test payload 0x08;
--   * writes to the signal characteristics (f617b813-..., and the iOS one 0eb0d5f2-...): payload (0x01),
--     RSSI (0x02), payload sharing (0x03), immediate send (0x04), and the empty keep-awake write, with
--     messages spread over several writes (or a Prepare/Execute Write) reassembled.
-- The characteristic is found by its UUID when the capture holds the GATT discovery, else by the
-- handles in the preferences (defaults: the handles `herald wearable` and `herald beacon` serve).
-- The country/state/location codes are read in the byte order picked in the preferences: the
-- specification's big-endian (default) or the reference apps' little-endian (`--byte-order apps`).
--
-- Filter with herald.* (e.g. `herald.payload.country == 826`, `herald.signal.action == 2`); problems
-- are expert items (`_ws.expert.group == "Malformed"`), never Lua errors.
--
-- Install: Tools/install copies this file into Wireshark's personal Lua plugin folder; or run
--   wireshark -X lua_script:Tools/wireshark/herald.lua capture.btsnoop

local herald = Proto("herald", "Herald proximity protocol")

-- Preferences ------------------------------------------------------------------------------------
local ORDER_SPEC, ORDER_APPS = 0, 1
herald.prefs.byte_order = Pref.enum("Payload byte order", ORDER_SPEC,
    "Byte order of the country, state and location codes (and the 0x08 client identifier): spec = "
    .. "big-endian, as the Simple payload specification says; apps = little-endian, as the Herald reference "
    .. "apps write them (herald's --byte-order apps)",
    { { 1, "spec", ORDER_SPEC }, { 2, "apps", ORDER_APPS } }, false)
herald.prefs.payload_handle = Pref.uint("Payload characteristic handle", 0x0010,
    "Value handle of the payload characteristic, used when the capture holds no GATT discovery (0: none)", 16)
herald.prefs.signal_handle = Pref.uint("Signal characteristic handle", 0x0012,
    "Value handle of the signal characteristic, used when the capture holds no GATT discovery (0: none)", 16)

-- Fields -----------------------------------------------------------------------------------------
local SIGNAL_ACTIONS = { [0] = "Keep awake", [1] = "Payload", [2] = "RSSI", [3] = "Payload sharing",
                         [4] = "Immediate send" }
local EXT_CODES = { [0x10] = "Premises name", [0x11] = "Location name", [0x12] = "Area disambiguation",
    [0x13] = "Location URL", [0x14] = "Full address", [0x15] = "Entry source", [0x16] = "Entry source version",
    [0x20] = "Contact event start", [0x21] = "Contact event end", [0x40] = "Your last RSSI",
    [0x41] = "Tx power", [0x42] = "Phone model" }

local F = {
    advert_service = ProtoField.string("herald.advert.service", "Herald service UUID"),
    advert_pseudo = ProtoField.bytes("herald.advert.pseudo_address", "Pseudo device address"),
    advert_company = ProtoField.uint16("herald.advert.manufacturer", "Pseudo address manufacturer ID", base.HEX),
    advert_address = ProtoField.string("herald.advert.address", "Advertiser address"),

    read = ProtoField.bytes("herald.read", "Payload read"),
    read_part = ProtoField.bytes("herald.read_part", "Payload read, first part"),
    payload_type = ProtoField.string("herald.payload.type", "Payload type"),
    payload_protocol = ProtoField.uint8("herald.payload.protocol", "Protocol and version", base.HEX),
    payload_country = ProtoField.uint16("herald.payload.country", "Country code", base.DEC),
    payload_state = ProtoField.uint16("herald.payload.state", "State code", base.DEC),
    payload_order = ProtoField.string("herald.payload.byte_order", "Codes byte order"),
    payload_contact = ProtoField.bytes("herald.payload.contact_identifier", "Contact identifier"),
    payload_short = ProtoField.string("herald.payload.short_name", "Short name"),
    payload_location = ProtoField.uint32("herald.payload.location", "Location code", base.DEC),
    payload_name = ProtoField.string("herald.payload.name", "Premises name"),
    payload_client = ProtoField.uint64("herald.payload.client", "Client identifier", base.DEC),
    payload_extended = ProtoField.bytes("herald.payload.extended", "Extended data"),
    ext_code = ProtoField.uint8("herald.ext.code", "Code", base.HEX, EXT_CODES),
    ext_length = ProtoField.uint8("herald.ext.length", "Length", base.DEC),
    ext_data = ProtoField.bytes("herald.ext.data", "Data"),
    ext_text = ProtoField.string("herald.ext.text", "Text"),
    ext_value = ProtoField.int32("herald.ext.value", "Value", base.DEC),

    signal = ProtoField.bytes("herald.signal", "Signal message"),
    signal_action = ProtoField.uint8("herald.signal.action", "Action", base.DEC, SIGNAL_ACTIONS),
    signal_rssi = ProtoField.int16("herald.signal.rssi", "RSSI (dBm)", base.DEC),
    signal_length = ProtoField.int16("herald.signal.length", "Length", base.DEC),
    signal_payload = ProtoField.bytes("herald.signal.payload", "Writer's payload"),
    signal_shared = ProtoField.bytes("herald.signal.shared", "Shared payload"),
    signal_data = ProtoField.bytes("herald.signal.data", "Immediate send data"),
    signal_fragment = ProtoField.framenum("herald.signal.fragment", "Fragment in frame"),
    signal_fragments = ProtoField.uint16("herald.signal.fragment_count", "Fragments", base.DEC),
    signal_reassembled_in = ProtoField.framenum("herald.signal.reassembled_in", "Reassembled in frame"),
    signal_pending = ProtoField.uint16("herald.signal.pending", "Bytes held for the message", base.DEC),
}
local field_list = {}
for _, f in pairs(F) do field_list[#field_list + 1] = f end
herald.fields = field_list

local E = {
    malformed_payload = ProtoExpert.new("herald.payload.malformed", "Malformed Herald payload",
        expert.group.MALFORMED, expert.severity.ERROR),
    unknown_payload = ProtoExpert.new("herald.payload.unknown", "Not a payload type Herald decodes",
        expert.group.PROTOCOL, expert.severity.WARN),
    malformed_signal = ProtoExpert.new("herald.signal.malformed", "Signal write that cannot form a message",
        expert.group.MALFORMED, expert.severity.ERROR),
    unreassembled = ProtoExpert.new("herald.signal.unreassembled", "Signal message that did not reassemble",
        expert.group.REASSEMBLE, expert.severity.WARN),
    internal = ProtoExpert.new("herald.internal", "Herald dissector could not decode this packet",
        expert.group.UNDECODED, expert.severity.NOTE),
}
herald.experts = { E.malformed_payload, E.unknown_payload, E.malformed_signal, E.unreassembled, E.internal }

-- Wireshark's own ATT decode gives the PDU after L2CAP reassembly.
local f_btatt = Field.new("btatt")

-- Identifiers (wire order is little-endian; compared as lower-case hex of the wire bytes).
local function wire_uuid(text)  -- "428132af-4746-..." -> little-endian hex of its 16 octets
    local hex = text:gsub("-", "")
    local out = {}
    for i = #hex - 1, 1, -2 do out[#out + 1] = hex:sub(i, i + 1) end
    return table.concat(out)
end
local SERVICE_UUID = "428132af-4746-42d3-801e-4572d65bfd9b"
local SERVICE_WIRE = wire_uuid(SERVICE_UUID)
local PAYLOAD_WIRE = wire_uuid("3e98c0f8-8f05-4829-a121-43e38f8933e7")
local SIGNAL_WIRES = { [wire_uuid("f617b813-092e-437a-8324-e09a80821a11")] = true,
                       [wire_uuid("0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363")] = true }
local PSEUDO_COMPANIES = { [0xFFFA] = true, [0x05F1] = true }

-- Small helpers ----------------------------------------------------------------------------------
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(bytes)  -- bytes: Lua string of octets
    local out = {}
    for i = 1, #bytes, 3 do
        local a, b, c = bytes:byte(i, i + 2)
        local n = a * 65536 + (b or 0) * 256 + (c or 0)
        local left = #bytes - i + 1
        local chars = left >= 3 and 4 or left + 1  -- 3 octets: 4 characters; 2: 3 and "="; 1: 2 and "=="
        for k = 1, 4 do
            if k <= chars then
                local idx = math.floor(n / 64 ^ (4 - k)) % 64
                out[#out + 1] = B64:sub(idx + 1, idx + 1)
            else
                out[#out + 1] = "="
            end
        end
    end
    return table.concat(out)
end

-- The Herald apps' payload short name: Base64 of everything after the 3-octet header, 6 characters
-- (of the whole payload when it is 3 octets or fewer), as `payloadShortName` in HeraldRuntime.
local function short_name(raw)
    if #raw == 0 then return "" end
    if #raw <= 3 then return base64(raw) end
    return base64(raw:sub(4)):sub(1, 6)
end

local function tohex(raw)
    return (raw:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local function u16le(raw, i) return raw:byte(i) + raw:byte(i + 1) * 256 end
local function i16le(raw, i)
    local v = u16le(raw, i)
    return v >= 0x8000 and v - 0x10000 or v
end

local function valid_utf8(s)
    local i, n = 1, #s
    while i <= n do
        local c = s:byte(i)
        local need, min, cp
        if c < 0x80 then need = 0
        elseif c >= 0xC2 and c <= 0xDF then need, min, cp = 1, 0x80, c % 0x20
        elseif c >= 0xE0 and c <= 0xEF then need, min, cp = 2, 0x800, c % 0x10
        elseif c >= 0xF0 and c <= 0xF4 then need, min, cp = 3, 0x10000, c % 0x08
        else return false end
        if need > 0 then
            if i + need > n then return false end
            for j = 1, need do
                local d = s:byte(i + j)
                if d < 0x80 or d > 0xBF then return false end
                cp = cp * 64 + d % 64
            end
            if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then return false end
        end
        i = i + need + 1
    end
    return true
end

local function is_text_code(code) return code == 0x05 or (code >= 0x10 and code <= 0x16) or code == 0x42 end

-- Payloads ---------------------------------------------------------------------------------------

-- Extended data: `code | length | data` sections (Herald payload extended data specification), with
-- the checks of ExtendedDataReader.validate. Returns the premises name (0x10) if any, and whether
-- every section was well formed.
local function dissect_extended(tvb, offset, tree, pinfo)
    local raw = tvb:raw(offset)
    local item = tree:add(F.payload_extended, tvb(offset))
    local i, name = 1, nil
    while i <= #raw do
        if i + 1 > #raw then
            item:add_proto_expert_info(E.malformed_payload, "extended data section cut short after its code")
            return name, false
        end
        local code, len = raw:byte(i), raw:byte(i + 1)
        local at = offset + i - 1
        if i + 1 + len > #raw then
            item:add_proto_expert_info(E.malformed_payload,
                string.format("extended data section 0x%02x declares %d octets, %d left", code, len, #raw - i - 1))
            return name, false
        end
        local label = EXT_CODES[code] or (code >= 0x80 and "Custom" or "Unknown")
        local sec = item:add(tvb(at, 2 + len), string.format("%s (0x%02x), %d octets", label, code, len))
        sec:add(F.ext_code, tvb(at, 1))
        sec:add(F.ext_length, tvb(at + 1, 1))
        local data = raw:sub(i + 2, i + 1 + len)
        local problem
        if len == 0 then problem = "an empty section (the specification omits items with no value)"
        elseif (code == 0x20 or code == 0x21) and len ~= 4 then problem = "a contact event time is 4 octets"
        elseif (code == 0x40 or code == 0x41) and len ~= 1 then problem = "a dBm value is 1 octet"
        elseif is_text_code(code) and not valid_utf8(data) then problem = "text that is not UTF-8"
        elseif code == 0x13 and (len <= 8 or data:sub(1, 8) ~= "https://") then problem = "a location URL must be https"
        end
        if len > 0 then
            sec:add(F.ext_data, tvb(at + 2, len))
            if is_text_code(code) and valid_utf8(data) then
                sec:add(F.ext_text, tvb(at + 2, len), data)
                sec:append_text(": " .. data)
                if code == 0x10 and name == nil then name = data end
            elseif (code == 0x40 or code == 0x41) and len == 1 then
                local v = data:byte(1); if v >= 0x80 then v = v - 0x100 end
                sec:add(F.ext_value, tvb(at + 2, 1), v)
                sec:append_text(string.format(": %d dBm", v))
            elseif (code == 0x20 or code == 0x21) and len == 4 then
                sec:add(F.ext_value, tvb(at + 2, 4), tvb(at + 2, 4):uint())
            end
        end
        if problem then
            sec:add_proto_expert_info(E.malformed_payload, string.format("extended data 0x%02x: %s", code, problem))
            return name, false
        end
        i = i + 2 + len
    end
    return name, true
end

-- A payload: Simple (0x10-0x17), venue beacon (0x30-0x37) or fixed test payload (0x08), as
-- DecodedPayloadFields decodes them. `tree` gets the fields; returns a one-line summary.
local function dissect_payload(tvb, tree, pinfo)
    local raw = tvb:raw()
    local n = #raw
    local apps = herald.prefs.byte_order == ORDER_APPS
    local order = apps and "apps" or "spec"
    local function u(off, len)
        local r = tvb(off, len)
        if len == 8 then return apps and r:le_uint64() or r:uint64() end
        return apps and r:le_uint() or r:uint()
    end
    if n == 0 then
        tree:add_proto_expert_info(E.malformed_payload, "empty payload")
        return "empty payload"
    end
    local p = raw:byte(1)
    local kind
    if p >= 0x10 and p <= 0x17 then kind = "simple"
    elseif p >= 0x30 and p <= 0x37 then kind = "venue"
    elseif p == 0x08 then kind = "test"
    else
        tree:add(F.payload_short, tvb(0, n), short_name(raw))
        tree:add_proto_expert_info(E.unknown_payload, string.format("payload protocol 0x%02x is none Herald decodes", p))
        return "payload " .. short_name(raw)
    end
    local need = ({ simple = 21, venue = 9, test = 13 })[kind]
    tree:add(F.payload_type, tvb(0, 1), kind)
    tree:add(F.payload_protocol, tvb(0, 1))
    local sn = short_name(raw)
    tree:add(F.payload_short, n > 3 and tvb(3, n - 3) or tvb(0, n), sn)
    if n < need then
        tree:add_proto_expert_info(E.malformed_payload,
            string.format("%s payload of %d octets, at least %d expected", kind, n, need))
        return string.format("%s payload, malformed (%d octets)", kind, n)
    end
    local country, state = u(1, 2), u(3, 2)
    tree:add(F.payload_country, tvb(1, 2), country)
    tree:add(F.payload_state, tvb(3, 2), state)
    tree:add(F.payload_order, tvb(1, 4), order)
    if kind == "simple" then
        tree:add(F.payload_contact, tvb(5, 16))
        local ok = true
        if n > 21 then
            if n - 21 > 489 then
                tree:add_proto_expert_info(E.malformed_payload,
                    string.format("%d octets of extended data, at most 489", n - 21))
                ok = false
            end
            local _, fine = dissect_extended(tvb, 21, tree, pinfo)
            ok = ok and fine
        end
        return string.format("Simple %d/%d %s", country, state, sn) .. (ok and "" or " (malformed)")
    elseif kind == "venue" then
        local location = u(5, 4)
        tree:add(F.payload_location, tvb(5, 4), location)
        local name, ok = nil, true
        if n > 9 then name, ok = dissect_extended(tvb, 9, tree, pinfo) end
        if name and ok then tree:add(F.payload_name, tvb(9, n - 9), name) end
        return string.format("venue %d/%d location %d", country, state, location)
            .. (name and ok and string.format(' "%s"', name) or "") .. (ok and "" or " (malformed)")
    else
        if n ~= 13 then
            tree:add_proto_expert_info(E.malformed_payload,
                string.format("fixed test payload of %d octets, exactly 13 expected", n))
            return string.format("test payload, malformed (%d octets)", n)
        end
        local client = u(5, 8)
        tree:add(F.payload_client, tvb(5, 8), client)
        return string.format("test %d/%d client %s", country, state, tostring(client))
    end
end

-- Per-capture state (built on the first, in-order pass; later passes only redraw) ----------------
local links       -- [link key] = { chars = {[handle] = "payload"|"signal"}, reads = {...}, signal = {...}, prepared = {...} }
local results     -- [frame number] = list of things to draw
local mtus        -- [connection handle] = { client MTU, server MTU } from Exchange MTU
local function reset_state() links, results, mtus = {}, {}, {} end
reset_state()
herald.init = reset_state

-- A link side: the connection handle and the direction the GATT server's packets travel (each side
-- of one connection can be a server with its own handles).
local function link(chandle, server_dir)
    local key = chandle .. "/" .. server_dir
    local l = links[key]
    if not l then
        l = { chars = {}, reads = nil, buffer = nil, prepared = nil }
        links[key] = l
    end
    return l
end

local function att_mtu(chandle)
    local m = mtus[chandle]
    if not m or not m[1] or not m[2] then return 23 end  -- the default ATT_MTU (Core 5.4 Vol 3 Part F 3.2.8)
    return math.min(m[1], m[2])
end

local function forget_connection(chandle)
    mtus[chandle] = nil
    local pending = {}
    for _, dir in ipairs({ 0, 1 }) do
        local l = links[chandle .. "/" .. dir]
        if l and l.buffer and #l.buffer.bytes > 0 then pending[#pending + 1] = l.buffer end
        links[chandle .. "/" .. dir] = nil
    end
    return pending
end

local function characteristic(l, handle)
    local c = l.chars[handle]
    if c then return c end
    if l.discovered then return nil end  -- discovery seen for this link: only its UUIDs count
    if handle == herald.prefs.payload_handle and handle ~= 0 then return "payload" end
    if handle == herald.prefs.signal_handle and handle ~= 0 then return "signal" end
    return nil
end

local function note(frame, item)
    local r = results[frame]
    if not r then r = {}; results[frame] = r end
    r[#r + 1] = item
end

-- Signal reassembly, as SignalReassembler: fragments are appended until the length the message
-- declares is reached; bytes that can never form a message are dropped with an expert item.
local function expected_length(b)
    if #b == 0 then return "complete", 0 end
    local t = b:byte(1)
    local at
    if t == 0x02 then return "complete", 3
    elseif t == 0x01 or t == 0x04 then at = 2
    elseif t == 0x03 then at = 4
    else return "invalid", string.format("message type 0x%02x is none of 0x01-0x04", t) end
    if #b < at + 1 then return "more" end
    local len = i16le(b, at)
    if len < 0 then return "invalid", string.format("negative length %d", len) end
    return "complete", at + 1 + len
end

local function signal_write(frame, l, value, fragment_frames)
    if #value == 0 then
        note(frame, { kind = "signal", action = 0, bytes = "", frames = { frame } })
        return
    end
    local buf = l.buffer or { bytes = "", frames = {} }
    buf.bytes = buf.bytes .. value
    for _, f in ipairs(fragment_frames) do buf.frames[#buf.frames + 1] = f end
    local state, total = expected_length(buf.bytes)
    if state == "invalid" then
        note(frame, { kind = "signal-bad", why = total, bytes = buf.bytes, frames = buf.frames })
        l.buffer = nil
    elseif state == "more" or #buf.bytes < total then
        note(frame, { kind = "signal-part", held = #buf.bytes, total = state == "complete" and total or nil })
        l.buffer = buf
    elseif #buf.bytes > total then
        note(frame, { kind = "signal-bad", bytes = buf.bytes, frames = buf.frames,
                      why = string.format("%d octets written for a message of %d", #buf.bytes, total) })
        l.buffer = nil
    else
        note(frame, { kind = "signal", action = buf.bytes:byte(1), bytes = buf.bytes, frames = buf.frames })
        for _, f in ipairs(buf.frames) do
            if f ~= frame then note(f, { kind = "signal-reassembled-in", frame = frame }) end
        end
        l.buffer = nil
    end
end

-- ATT (Core 5.4 Vol 3 Part F 3.4): learn characteristics from discovery, follow reads and writes.
local function att_first_pass(frame, dir, chandle, att)
    local op = att:byte(1)
    if not op then return end
    local server, client = dir, 1 - dir  -- for responses; requests swap these below
    if (op == 0x02 or op == 0x03) and #att >= 3 then  -- Exchange MTU Request / Response
        mtus[chandle] = mtus[chandle] or {}
        mtus[chandle][op == 0x02 and 1 or 2] = u16le(att, 2)
    elseif op == 0x08 and #att >= 7 then  -- Read By Type Request: discovery (0x2803) or a read by UUID
        local l = link(chandle, 1 - dir)
        l.by_type = tohex(att:sub(6))
    elseif op == 0x09 and #att >= 2 then  -- Read By Type Response
        local len = att:byte(2)
        local l = link(chandle, server)
        local asked = l.by_type
        l.by_type = nil
        local i = 3
        if asked == PAYLOAD_WIRE then
            -- Read Using Characteristic UUID (Core 5.4 Vol 3 Part G 4.8.2): handle(2) value, per entry.
            while len >= 2 and i + len - 1 <= #att do
                l.chars[u16le(att, i)] = "payload"
                local value = att:sub(i + 2, i + len - 1)
                l.long_read = { bytes = value }
                -- A value as long as a response can carry may go on in Read Blob (Core 5.4 Vol 3 Part G 4.8.3).
                local part = #value >= math.min(att_mtu(chandle) - 4, 253)
                note(frame, { kind = part and "read-part" or "read", bytes = value, whole = value, at = i + 1 })
                i = i + len
            end
            return
        end
        while len >= 7 and i + len - 1 <= #att do
            -- Characteristic declarations: handle(2) properties(1) value handle(2) UUID(2 or 16)
            local value_handle = u16le(att, i + 3)
            local uuid = att:sub(i + 5, i + len - 1)
            if #uuid == 16 then
                local w = tohex(uuid)
                l.discovered = true
                if w == PAYLOAD_WIRE then l.chars[value_handle] = "payload"
                elseif SIGNAL_WIRES[w] then l.chars[value_handle] = "signal" end
            end
            i = i + len
        end
    elseif op == 0x05 and #att >= 2 and att:byte(2) == 0x02 then  -- Find Information Response, 128-bit
        local l = link(chandle, server)
        for i = 3, #att - 17, 18 do
            local w = tohex(att:sub(i + 2, i + 17))
            local h = u16le(att, i)
            if w == PAYLOAD_WIRE then l.chars[h] = "payload"; l.discovered = true
            elseif SIGNAL_WIRES[w] then l.chars[h] = "signal"; l.discovered = true end
        end
    elseif (op == 0x0A or op == 0x0C) and #att >= 3 then  -- Read (Blob) Request
        local l = link(chandle, 1 - dir)
        l.reads = { handle = u16le(att, 2), offset = op == 0x0C and #att >= 5 and u16le(att, 4) or 0 }
    elseif (op == 0x0B or op == 0x0D) then  -- Read (Blob) Response
        local l = link(chandle, server)
        local r = l.reads
        l.reads = nil
        if r and characteristic(l, r.handle) == "payload" then
            if r.offset == 0 then
                l.long_read = { bytes = att:sub(2), frame = frame }
            elseif l.long_read then
                l.long_read.bytes = l.long_read.bytes .. att:sub(2)
            end
            local part = #att >= att_mtu(chandle)  -- a full response: Read Blob may follow
            note(frame, { kind = part and "read-part" or "read", bytes = att:sub(2),
                          whole = l.long_read and l.long_read.bytes or att:sub(2), at = 1 })
        end
    elseif (op == 0x12 or op == 0x52) and #att >= 3 then  -- Write Request / Command
        local l = link(chandle, 1 - dir)
        if characteristic(l, u16le(att, 2)) == "signal" then
            note(frame, { kind = "write" })
            signal_write(frame, l, att:sub(4), { frame })
        end
    elseif op == 0x16 and #att >= 5 then  -- Prepare Write Request: queued until Execute
        local l = link(chandle, 1 - dir)
        if characteristic(l, u16le(att, 2)) == "signal" then
            l.prepared = l.prepared or { parts = {}, frames = {} }
            l.prepared.parts[#l.prepared.parts + 1] = { offset = u16le(att, 4), bytes = att:sub(6) }
            l.prepared.frames[#l.prepared.frames + 1] = frame
            note(frame, { kind = "signal-part", held = nil, prepared = true })
        end
    elseif op == 0x18 and #att >= 2 then  -- Execute Write Request
        local l = link(chandle, 1 - dir)
        local p = l.prepared
        l.prepared = nil
        if p and att:byte(2) == 0x01 then
            table.sort(p.parts, function(a, b) return a.offset < b.offset end)
            local value = ""
            for _, part in ipairs(p.parts) do
                value = value:sub(1, part.offset) .. part.bytes
            end
            local frames = p.frames
            frames[#frames + 1] = frame
            signal_write(frame, l, value, frames)
        end
    end
end

-- HCI events: adverts, and connections coming and going (Core 5.4 Vol 4 Part E 7.7).
local function parse_ad(data, base)
    -- AD structures (Core Supplement Part A 1): returns the Herald facts with their offsets.
    local found = {}
    local i = 1
    while i <= #data do
        local len = data:byte(i)
        if len == 0 or i + len > #data then break end
        local t = data:byte(i + 1)
        local d = data:sub(i + 2, i + len)
        local at = base + i + 1  -- offset of d in the frame
        if (t == 0x02 or t == 0x03) then
            for k = 1, #d - 1, 2 do
                if u16le(d, k) == 0xFCF6 then found[#found + 1] = { "service", at + k - 1, 2, "fcf6" } end
            end
        elseif (t == 0x06 or t == 0x07) then
            for k = 1, #d - 15, 16 do
                if tohex(d:sub(k, k + 15)) == SERVICE_WIRE then
                    found[#found + 1] = { "service", at + k - 1, 16, SERVICE_UUID }
                end
            end
        elseif t == 0xFF and #d == 8 and PSEUDO_COMPANIES[u16le(d, 1)] then
            found[#found + 1] = { "pseudo", at, 8, u16le(d, 1) }
        end
        i = i + len + 1
    end
    return found
end


-- The whole reports of an LE (Extended) Advertising Report event (Core 5.4 Vol 4 Part E 7.7.65.2,
-- 7.7.65.13), from the count at octet 5: in each, the data length at `len_at` octets from its start,
-- the data right after it, the address at `addr_at`, and `trailing` octets after the data.
local function reports_in(raw, len_at, addr_at, trailing)
    local out, i = {}, 6
    for _ = 1, raw:byte(5) do
        if i + len_at > #raw then break end
        local len = raw:byte(i + len_at)
        if i + len_at + len > #raw then break end
        out[#out + 1] = { addr = i + addr_at, data = i + len_at + 1, len = len }
        i = i + len_at + 1 + len + trailing
    end
    return out
end
local function dissect_event(tvb, pinfo, tree, raw)
    -- raw: the H4 packet (0x04, event code, length, parameters)
    local code = raw:byte(2)
    if code == 0x05 and #raw >= 6 then  -- Disconnection Complete
        if not pinfo.visited then
            local chandle = u16le(raw, 5) % 0x1000
            for _, buf in ipairs(forget_connection(chandle)) do
                note(pinfo.number, { kind = "lost", held = #buf.bytes, frames = buf.frames })
            end
        end
        return
    end
    if code ~= 0x3E or #raw < 4 then return end
    local sub = raw:byte(4)
    if (sub == 0x01 or sub == 0x0A) and #raw >= 7 and not pinfo.visited then  -- (Enhanced) Connection Complete
        forget_connection(u16le(raw, 6) % 0x1000)
        return
    end
    local reports = {}
    if sub == 0x02 and #raw >= 5 then  -- LE Advertising Report: RSSI after the data
        reports = reports_in(raw, 8, 2, 1)
    elseif sub == 0x0D and #raw >= 5 then  -- LE Extended Advertising Report: the data last
        reports = reports_in(raw, 23, 3, 0)
    end
    for _, r in ipairs(reports) do
        local found = parse_ad(raw:sub(r.data, r.data + r.len - 1), r.data - 1)
        if #found > 0 then
            local t = tree:add(herald, tvb(r.data - 1, r.len), "Herald advert")
            local a = {}
            for k = 5, 0, -1 do a[#a + 1] = string.format("%02X", raw:byte(r.addr + k)) end
            t:add(F.advert_address, tvb(r.addr - 1, 6), table.concat(a, ":"))
            local names = {}
            for _, f in ipairs(found) do
                -- f[2]: where the item starts in the frame, counted from 0
                if f[1] == "service" then
                    t:add(F.advert_service, tvb(f[2], f[3]), f[4])
                    names[#names + 1] = f[3] == 2 and "0xFCF6" or "128-bit service"
                else
                    t:add(F.advert_company, tvb(f[2], 2), f[4])
                    t:add(F.advert_pseudo, tvb(f[2] + 2, 6))
                    names[#names + 1] = "pseudo address " .. tohex(raw:sub(f[2] + 3, f[2] + 8))
                end
            end
            t:append_text(": " .. table.concat(names, ", "))
        end
    end
end

-- Drawing what the first pass found for this frame.
local function draw(tvb, pinfo, tree, att_tvb)
    local list = results[pinfo.number]
    if not list then return end
    local info = {}
    for _, r in ipairs(list) do
        if r.kind == "read" then
            local t = tree:add(herald, "Herald payload read")
            local value_tvb = #r.bytes > 0 and att_tvb and att_tvb:len() >= r.at + #r.bytes
                and att_tvb(r.at, #r.bytes):tvb() or nil
            local whole = r.whole
            local ptvb = value_tvb
            if #whole ~= #r.bytes then ptvb = ByteArray.new(tohex(whole)):tvb("Herald payload (long read)") end
            if ptvb then
                t:add(F.read, ptvb(0, ptvb:len()))
                local summary = dissect_payload(ptvb, t, pinfo)
                t:append_text(": " .. summary)
                info[#info + 1] = "Herald payload " .. summary
            else
                t:add_proto_expert_info(E.malformed_payload, "empty payload")
                info[#info + 1] = "Herald payload (empty)"
            end
        elseif r.kind == "read-part" then
            local t = tree:add(herald, "Herald payload read, first part")
            t:add(F.read_part, att_tvb(r.at, #r.bytes))
            t:append_text(string.format(" (%d octets; a Read Blob may bring the rest)", #r.bytes))
            info[#info + 1] = "Herald payload (first part)"
        elseif r.kind == "signal" then
            local t = tree:add(herald, "Herald signal")
            local action = r.action
            if action == 0 then
                t:add(F.signal_action, 0):set_generated()
                t:append_text(": keep awake")
                info[#info + 1] = "Herald keep-awake"
            else
                local mtvb
                if #r.frames > 1 then
                    mtvb = ByteArray.new(tohex(r.bytes)):tvb("Herald signal (reassembled)")
                    t:add(F.signal_fragments, #r.frames):set_generated()
                    for _, f in ipairs(r.frames) do t:add(F.signal_fragment, f):set_generated() end
                else
                    mtvb = att_tvb(3):tvb()
                end
                t:add(F.signal, mtvb(0, mtvb:len()))
                t:add(F.signal_action, mtvb(0, 1))
                local name = SIGNAL_ACTIONS[action]
                local text = name
                if action == 0x02 then
                    local rssi = mtvb(1, 2):le_int()
                    t:add(F.signal_rssi, mtvb(1, 2), rssi)
                    text = string.format("RSSI %d dBm", rssi)
                else
                    local at = action == 0x03 and 3 or 1
                    local rssi
                    if action == 0x03 then
                        rssi = mtvb(1, 2):le_int()
                        t:add(F.signal_rssi, mtvb(1, 2), rssi)
                    end
                    local len = mtvb(at, 2):le_int()
                    t:add(F.signal_length, mtvb(at, 2), len)
                    local body = len > 0 and mtvb(at + 2, len) or nil
                    if action == 0x01 and body then
                        local pt = t:add(F.signal_payload, body)
                        text = "payload " .. dissect_payload(body:tvb(), pt, pinfo)
                    elseif action == 0x03 then
                        local count = math.floor(len / 21)
                        for k = 0, count - 1 do
                            local pt = t:add(F.signal_shared, mtvb(at + 2 + 21 * k, 21))
                            pt:append_text(" (" .. dissect_payload(mtvb(at + 2 + 21 * k, 21):tvb(), pt, pinfo) .. ")")
                        end
                        if len % 21 ~= 0 then
                            t:add_proto_expert_info(E.malformed_signal,
                                string.format("shared payloads of %d octets, not a multiple of 21", len))
                        end
                        text = string.format("payload sharing RSSI %d dBm, %d payload%s", rssi, count, count == 1 and "" or "s")
                    elseif action == 0x04 then
                        if body then t:add(F.signal_data, body) end
                        text = "immediate send " .. (body and tohex(body:raw()) or "")
                    else
                        text = name .. " (empty)"
                    end
                end
                t:append_text(": " .. text)
                info[#info + 1] = "Herald " .. text
            end
        elseif r.kind == "signal-part" then
            local t = tree:add(herald, "Herald signal fragment")
            if r.held then
                t:add(F.signal_pending, r.held):set_generated()
                t:append_text(r.total and string.format(" (%d of %d octets)", r.held, r.total) or
                    string.format(" (%d octets, length not yet known)", r.held))
            else
                t:append_text(" (queued write)")
            end
            info[#info + 1] = "Herald signal fragment"
        elseif r.kind == "signal-reassembled-in" then
            local t = tree:add(herald, "Herald signal fragment")
            t:add(F.signal_reassembled_in, r.frame):set_generated()
            t:append_text(string.format(" (message reassembled in frame %d)", r.frame))
        elseif r.kind == "signal-bad" then
            local t = tree:add(herald, "Herald signal write that cannot form a message")
            for _, f in ipairs(r.frames) do t:add(F.signal_fragment, f):set_generated() end
            t:add_proto_expert_info(E.malformed_signal, "signal write dropped: " .. r.why)
            info[#info + 1] = "Herald signal (malformed)"
        elseif r.kind == "lost" then
            local t = tree:add(herald, "Herald signal message not reassembled")
            for _, f in ipairs(r.frames) do t:add(F.signal_fragment, f):set_generated() end
            t:add_proto_expert_info(E.unreassembled,
                string.format("the link closed with %d octets of a signal message still incomplete", r.held))
            info[#info + 1] = "Herald signal incomplete"
        end
    end
    if #info > 0 then
        pinfo.cols.protocol:set("Herald")
        pinfo.cols.info:append(" [" .. table.concat(info, "; ") .. "]")
    end
end

-- The postdissector: runs after Wireshark's own Bluetooth dissectors on every packet.
function herald.dissector(tvb, pinfo, tree)
    local ok, err = pcall(function()
        if tvb:len() < 1 then return end
        local h4 = tvb(0, 1):uint()
        if h4 == 0x04 then
            dissect_event(tvb, pinfo, tree, tvb:raw())
            draw(tvb, pinfo, tree, nil)
            return
        end
        if h4 ~= 0x02 then return end
        local atts = { f_btatt() }
        local att = atts[1]
        if not att then
            draw(tvb, pinfo, tree, nil)
            return
        end
        local att_tvb = att.range:tvb()
        if not pinfo.visited then
            local chandle = tvb(1, 2):le_uint() % 0x1000
            local dir = pinfo.p2p_dir == 1 and 1 or 0
            att_first_pass(pinfo.number, dir, chandle, att_tvb:raw())
        end
        draw(tvb, pinfo, tree, att_tvb)
    end)
    if not ok then
        tree:add(herald, "Herald"):add_proto_expert_info(E.internal, tostring(err))
    end
end

register_postdissector(herald, true)
