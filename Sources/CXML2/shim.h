#ifndef WF_CXML2_SHIM_H
#define WF_CXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, so <libxml/encoding.h> would pull in the
   system's <unicode/ucnv.h>. Its UErrorCode then meets Foundation's own copy
   (_FoundationICU) in any module that imports both, and a clean build fails
   with "'UErrorCode' has different definitions in different modules" whenever
   that module is the first to build the two into the module cache. Nothing
   here uses ICU: without the macro, only the two ICU pointers at the end of
   xmlCharEncodingHandler are left out, a struct XMLStream never reads. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

/* libxml2 writes a few errors (a failed encoding conversion in xmlParseChunk)
   straight to its generic, printf-style channel, whose handler type is
   variadic and so cannot be written in Swift. This handler drops them: the
   same failures also reach the structured channel XMLStream listens to. */
static void wf_xml_drop_generic_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

/* The calling thread's error channels (libxml2 keeps them per thread), saved
   so they can be put back. The generic handler is kept as a plain pointer
   because Swift cannot import a variadic function type. */
typedef struct {
    void *genericHandler;
    void *genericContext;
    xmlStructuredErrorFunc structuredHandler;
    void *structuredContext;
} wf_xml_error_channels;

/* Routes this thread's context-free libxml2 errors (encoding conversion, I/O)
   to `handler` with `context`, silences the generic channel, and returns what
   was there before. */
static inline wf_xml_error_channels wf_xml_listen_to_errors(xmlStructuredErrorFunc handler, void *context) {
    wf_xml_error_channels saved = {
        (void *)xmlGenericError, xmlGenericErrorContext, xmlStructuredError, xmlStructuredErrorContext
    };
    xmlSetGenericErrorFunc(NULL, wf_xml_drop_generic_error);
    xmlSetStructuredErrorFunc(context, handler);
    return saved;
}

/* Puts back the channels `wf_xml_listen_to_errors` returned. */
static inline void wf_xml_restore_errors(wf_xml_error_channels saved) {
    xmlSetGenericErrorFunc(saved.genericContext, (xmlGenericErrorFunc)saved.genericHandler);
    xmlSetStructuredErrorFunc(saved.structuredContext, saved.structuredHandler);
}
#endif
