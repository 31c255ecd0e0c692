#include "seedance/report/html.h"

#include <gtest/gtest.h>

namespace seedance::report {
namespace {

TEST(HtmlEscapeTest, EscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape(R"(<script>alert("x") & 'y'</script>)"),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
}

TEST(HtmlEscapeTest, LeavesPlainTextAndUtf8Alone) {
  EXPECT_EQ(HtmlEscape("4.77 ± 0.11, Mélange"), "4.77 ± 0.11, Mélange");
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(HtmlEscapeTest, EscapesEntitiesOnlyOnce) {
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;");  // text, not markup: the & is escaped
}

}  // namespace
}  // namespace seedance::report
