import Testing
@testable import HeraldRuntime

@Test func runtimeVersion() { #expect(!HeraldRuntime.version.isEmpty) }
