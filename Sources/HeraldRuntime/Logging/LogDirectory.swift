import Foundation

/// Anything that takes sensor events (the log directory; tests; later a live display).
public protocol SensorEventConsumer: AnyObject {
    func record(_ event: SensorEventRecord)
}

/// A directory of Herald logs: `contacts.csv`, `payloads.csv`, `statistics.csv`, `detection.csv`,
/// `served-payloads.csv` and `log.txt`, kept up to date from `SensorEventRecord`s.
///
/// `record` and `log` only enqueue: formatting and file I/O happen on a private serial queue, so the
/// radio loop never waits on storage. A timer on that queue hands buffered lines to the kernel at
/// least every `flushInterval` (default 0.5 s), so killing the process loses at most that much;
/// `close` flushes, rewrites the whole-file logs and `fsync`s everything.
public final class LogDirectory: SensorEventConsumer, @unchecked Sendable {
    public struct Configuration: Sendable {
        /// First column of `detection.csv` (the phone model in the reference apps).
        public var deviceName: String
        public var operatingSystem: String
        public var operatingSystemVersion: String
        /// Our own payload: its short name goes in `detection.csv` and is left out of the peer lists.
        public var ownPayload: [UInt8]
        /// Lowest `log.txt` level written.
        public var logLevel: LogLevel
        /// At most this many seconds of events sit in memory before reaching the kernel (≤ 1 s).
        public var flushInterval: Double

        public init(deviceName: String = ProcessInfo.processInfo.hostName, operatingSystem: String = LogDirectory.operatingSystemName,
                    operatingSystemVersion: String = LogDirectory.operatingSystemVersion, ownPayload: [UInt8] = [],
                    logLevel: LogLevel = .info, flushInterval: Double = 0.5) {
            self.deviceName = deviceName
            self.operatingSystem = operatingSystem
            self.operatingSystemVersion = operatingSystemVersion
            self.ownPayload = ownPayload
            self.logLevel = logLevel
            self.flushInterval = min(max(flushInterval, 0.01), 1.0)
        }
    }

    #if os(Linux)
    public static let operatingSystemName = "Linux"
    #elseif os(macOS)
    public static let operatingSystemName = "macOS"
    #else
    public static let operatingSystemName = "Other"
    #endif
    public static var operatingSystemVersion: String {
        let v = ProcessInfo.processInfo.operatingSystemVersion
        return "\(v.majorVersion).\(v.minorVersion).\(v.patchVersion)"
    }

    public let path: String
    public let configuration: Configuration
    private let queue = DispatchQueue(label: "herald.logs")
    private let timer: DispatchSourceTimer
    // Queue-confined state.
    private let contacts: LogFile
    private let payloads: LogFile
    private let text: LogFile
    private let statisticsFile: LogFile
    private let detectionFile: LogFile
    private let servedFile: LogFile
    private var served = ServedPayloadLog()
    private var statistics: StatisticsLog
    private var detection: DetectionLog
    private var statisticsDirty = false
    private var detectionDirty = false
    private var closed = false
    private var errorStore: LogError?
    private let errorLock = NSLock()

    /// Creates the directory if needed and opens every file (appending; a header only in a new file).
    public init(path: String, configuration: Configuration = Configuration()) throws(LogError) {
        self.path = path
        self.configuration = configuration
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { throw LogError(path: path, reason: "exists and is not a directory") }
        } else {
            var failure: String?
            do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
                failure = "cannot create directory (\(CommandMessage.reason(error)))"
            }
            if let failure { throw LogError(path: path, reason: failure) }
        }
        func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
        contacts = try LogFile(appending: file(ContactLog.fileName), header: ContactLog.header)
        payloads = try LogFile(appending: file(PayloadLog.fileName), header: PayloadLog.header)
        text = try LogFile(appending: file(TextLog.fileName), header: nil)
        let servedFile = try LogFile(appending: file(ServedPayloadLog.fileName), header: ServedPayloadLog.header)
        // Our payload at the start is ours whether or not anyone reads it.
        var served = ServedPayloadLog()
        if let first = served.line(serving: configuration.ownPayload, at: Date()) { try servedFile.append(first) }
        self.servedFile = servedFile
        self.served = served
        statistics = StatisticsLog(ownPayload: configuration.ownPayload)
        detection = DetectionLog(deviceName: configuration.deviceName, operatingSystem: configuration.operatingSystem,
                                 operatingSystemVersion: configuration.operatingSystemVersion, ownPayload: configuration.ownPayload)
        statisticsFile = try LogFile(replacing: file(StatisticsLog.fileName), initial: statistics.content)
        detectionFile = try LogFile(replacing: file(DetectionLog.fileName), initial: detection.content)
        timer = DispatchSource.makeTimerSource(queue: queue)
        let ns = Int(configuration.flushInterval * 1e9)
        timer.schedule(deadline: .now() + .nanoseconds(ns), repeating: .nanoseconds(ns), leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.flushOnQueue() }
        timer.resume()
    }

    deinit {
        timer.cancel()
        // Every queued block holds `self`, so none is left to run: finishing here cannot race the queue.
        if !closed {
            flushOnQueue(sync: true)
            for f in [contacts, payloads, text, servedFile] { try? f.close() }
        }
    }

    /// The first write error since opening (writes happen on the queue, which cannot throw to the caller).
    public var firstError: LogError? {
        errorLock.lock(); defer { errorLock.unlock() }
        return errorStore
    }

    private func remember(_ e: LogError) {
        errorLock.lock(); defer { errorLock.unlock() }
        if errorStore == nil { errorStore = e }
    }

    public func record(_ event: SensorEventRecord) {
        queue.async { [self] in
            guard !closed else { return }
            do throws(LogError) {
                for l in ContactLog.lines(for: event) { try contacts.append(l) }
                for l in PayloadLog.lines(for: event) { try payloads.append(l) }
            } catch { remember(error) }
            if statistics.add(event) { statisticsDirty = true }
            if detection.add(event) { detectionDirty = true }
            if let m = TextLog.describe(event), configuration.logLevel <= .debug {
                appendText(TextLog.line(time: event.time, level: .debug, subsystem: "Sensor", category: "Data.LogDirectory", message: m))
            }
        }
    }

    /// Our payload was served (read by a peer) at `time`: a `served-payloads.csv` row when it differs
    /// from the last one, so every payload this device served can be attributed to it.
    public func recordServed(_ payload: [UInt8], at time: Date = Date()) {
        queue.async { [self] in
            guard !closed, let line = served.line(serving: payload, at: time) else { return }
            do throws(LogError) { try servedFile.append(line) } catch { remember(error) }
        }
    }

    /// An entry in `log.txt`, kept if `level` is at or above the configured level.
    public func log(_ level: LogLevel, subsystem: String = "Sensor", category: String, _ message: String, at time: Date = Date()) {
        guard level != .off, level >= configuration.logLevel else { return }
        let line = TextLog.line(time: time, level: level, subsystem: subsystem, category: category, message: message)
        queue.async { [self] in
            guard !closed else { return }
            appendText(line)
        }
    }

    private func appendText(_ line: String) {
        do throws(LogError) { try text.append(line) } catch { remember(error) }
    }

    private func flushOnQueue(sync: Bool = false) {
        for f in [contacts, payloads, text, servedFile] {
            do throws(LogError) { try f.flush() } catch { remember(error) }
        }
        if statisticsDirty || sync {
            do throws(LogError) { try statisticsFile.replace(statistics.content, sync: sync); statisticsDirty = false } catch { remember(error) }
        }
        if detectionDirty || sync {
            do throws(LogError) { try detectionFile.replace(detection.content, sync: sync); detectionDirty = false } catch { remember(error) }
        }
    }

    /// Waits until everything recorded so far has reached the kernel.
    public func flush() {
        queue.sync { if !closed { flushOnQueue() } }
    }

    /// Flushes, rewrites the whole-file logs, `fsync`s and closes; reports the first error of the session.
    public func close() throws(LogError) {
        timer.cancel()
        queue.sync {
            guard !closed else { return }
            closed = true
            flushOnQueue(sync: true)
            for f in [contacts, payloads, text, servedFile] {
                do throws(LogError) { try f.close() } catch { remember(error) }
            }
        }
        if let e = firstError { throw e }
    }
}
