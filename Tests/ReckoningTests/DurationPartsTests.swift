import Testing
import Reckoning

@Suite struct DurationPartsTests {
    @Test func secondsAndMicrosecondsKeepTheFraction() {
        #expect(Duration.milliseconds(1_500).inSeconds == 1.5)
        #expect(Duration.microseconds(250).inMicroseconds == 250)
        #expect(Duration.seconds(2).inMicroseconds == 2_000_000)
    }

    @Test func wholeMillisecondsDropOrRoundUpTheRest() {
        #expect(Duration.microseconds(2_999).wholeMilliseconds == 2)
        #expect(Duration.microseconds(2_999).wholeMillisecondsRoundedUp == 3)
        #expect(Duration.milliseconds(3).wholeMillisecondsRoundedUp == 3)
        // A positive duration never rounds to 0, which libcurl and poll read as "no wait".
        #expect(Duration.nanoseconds(1).wholeMilliseconds == 0)
        #expect(Duration.nanoseconds(1).wholeMillisecondsRoundedUp == 1)
        #expect(Duration.seconds(90).wholeMilliseconds == 90_000)
    }
}
