#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the run when a property of the code under test does not hold: the
/// message goes to standard error and `abort()` makes libFuzzer save the
/// input as a crash, the same as a trap or an AddressSanitizer report.
public func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    var line = "property violated: \(message())\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    abort()
}

/// The bytes libFuzzer hands `LLVMFuzzerTestOneInput`, copied out.
public func fuzzInput(_ data: UnsafePointer<UInt8>, _ count: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: count))
}
