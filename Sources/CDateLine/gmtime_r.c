// Each response's Date line is made with gmtime_r (DateLine), and glibc's
// gmtime_r (__tz_convert) takes the time-zone lock, one lock for the whole
// process, on every call: the last lock every HTTP worker took for every
// response (perf with DWARF chains, issue 35). UTC needs no time zone, so this
// gmtime_r, defined in the executable, is found by the dynamic linker before
// glibc's (every reference to it binds here) and takes no lock: the
// civil date from a day count, as in Howard Hinnant's "chrono-Compatible
// Low-Level Date Algorithms". Its answers are glibc's, field for field
// (Tests/HTTPServerTests/DateLineTests.swift compares them), except under a TZ
// naming a "right/" zone, where glibc's counts leap seconds even for UTC: this
// one counts none, as POSIX time and HTTP dates do.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>

#include "CDateLine.h"

struct tm *gmtime_r(const time_t *restrict timer, struct tm *restrict result) {
    long long seconds = (long long)*timer;
    long long days = seconds / 86400, within = seconds % 86400;
    if (within < 0) {
        within += 86400;
        days -= 1;
    }
    // Days from 0000-03-01, in 400-year eras of 146,097 days.
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long dayOfEra = z - era * 146097;
    long long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365;
    long long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);  // from March 1
    long long monthFromMarch = (5 * dayOfYear + 2) / 153;
    long long day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1;
    long long month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
    long long year = yearOfEra + era * 400 + (month <= 2);
    if (year - 1900 > INT_MAX || year - 1900 < INT_MIN) {
        errno = EOVERFLOW;
        return NULL;
    }
    static const short daysBefore[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    long long weekday = (days + 4) % 7;  // 1970-01-01 was a Thursday
    result->tm_sec = (int)(within % 60);
    result->tm_min = (int)(within / 60 % 60);
    result->tm_hour = (int)(within / 3600);
    result->tm_mday = (int)day;
    result->tm_mon = (int)(month - 1);
    result->tm_year = (int)(year - 1900);
    result->tm_wday = (int)(weekday < 0 ? weekday + 7 : weekday);
    result->tm_yday = daysBefore[month - 1] + (int)day - 1 + (month > 2 && leap);
    result->tm_isdst = 0;
    result->tm_gmtoff = 0;
    result->tm_zone = "GMT";
    return result;
}

int wf_gmtime_r_is_lock_free(void) {
    void *found = dlsym(RTLD_DEFAULT, "gmtime_r");
    return found == (void *)gmtime_r ? 1 : 0;
}

struct tm *wf_glibc_gmtime_r(const time_t *timer, struct tm *result) {
    struct tm *(*glibc)(const time_t *, struct tm *) = (struct tm * (*)(const time_t *, struct tm *))dlsym(RTLD_NEXT, "gmtime_r");
    return glibc == NULL ? NULL : glibc(timer, result);
}
