// The report page's own style sheet and script (inline: the page needs no other file).
#pragma once

namespace kiln::report {

// Laptop widths and print: the charts scale with the page (SVG viewBox), the table scrolls
// sideways on a narrow screen, and print drops the hover read-outs and keeps charts whole.
extern const char* const kPageStyle;
// Hover read-outs: the value of each run's curve at the pointer's x. When it has run it
// sets data-kiln-script="ready" on <html>, which the browser test checks.
extern const char* const kPageScript;

}  // namespace kiln::report
