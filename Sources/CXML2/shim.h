#ifndef WF_CXML2_SHIM_H
#define WF_CXML2_SHIM_H
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
