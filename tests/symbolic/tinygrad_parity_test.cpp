// tinygrad's own expectations (test/unit/test_uop_symbolic.py at the seed commit, which runs
// the codegen's symbolic_flat): each case is tinygrad's expression and bounds, and the result
// tunebed gives, written in tunebed's syntax; tinygrad's rendering is the comment. Where the two
// differ in more than notation, the comment says why.
#include <gtest/gtest.h>

#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {
namespace {

struct ParityCase {
  const char* vars;  // NAME:MIN:MAX,...
  const char* expr;
  const char* expected;
};

ExprOptions parse_bounds(const std::string& spec) {
  ExprOptions o;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(',', start);
    std::string entry = spec.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t c1 = entry.find(':'), c2 = entry.find(':', c1 + 1);
    o.vars[entry.substr(0, c1)] = {std::stoll(entry.substr(c1 + 1, c2 - c1 - 1)), std::stoll(entry.substr(c2 + 1))};
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return o;
}

const ParityCase kCases[] = {
    // (a<4)
    {"a:3:8", "a<4", "a<4"},
    // False
    {"a:3:8", "a<3", "false"},
    // True
    {"a:3:4,b:5:6", "a<b", "true"},
    // 1
    {"a:2:3", "a//2", "1"},
    // (b+(a*5))
    {"a:0:8,b:0:8", "b+a*2+a*3", "a*5+b"},
    // ((a*3)+(b*4))
    {"a:0:8,b:0:8", "(a*3+b)+b*3", "a*3+b*4"},
    // 0
    {"a:0:2", "(a*-1)//3", "0"},
    // ((a//3)*-1)
    {"a:2:7", "(a*-1)//3", "-(a//3)"},
    // max(a, 11)
    {"a:0:20", "max(max(a,10),11)", "max(a, 11)"},
    // ((a//2)*-1)
    {"a:1:7", "a//-2", "-(a//2)"},
    // ((a*2)+(b*2))
    {"a:0:7,b:0:3", "(a*4+b*4)//2", "a*2+b*2"},
    // 0
    {"a:0:7,b:0:3", "(a*4+b*4)%2", "0"},
    // (((a*5)//2)+(b*2))
    {"a:0:7,b:0:3", "(a*5+b*4)//2", "b*2+a*5//2"},
    // (((a+b)+1)//4)
    {"a:0:7,b:0:3", "(a*4+b*4+7)//16", "(a+b+1)//4"},
    // (((a*3)+(b*3))//8)
    {"a:0:7,b:0:7", "(a*6+b*6)//16", "(a*3+b*3)//8"},
    // ((((a*3)+(b*3))//8)+1)
    {"a:0:7,b:0:7", "(16+a*6+b*6)//16", "(a*3+b*3)//8+1"},
    // (((a*3)//2)+1)
    {"a:0:7", "(a*30+20)//20", "a*3//2+1"},
    // (((x*-1)%y)*-1)
    {"x:-10:0,y:1:10", "x%y", "-(-x%y)"},
    // (x%y)
    {"x:0:10,y:-10:-1", "x%y", "x%y"},
    // ((b%2)*50)
    {"a:0:7,b:0:3", "(a*100+b*50)%100", "b%2*50"},
    // (a+-1)
    {"a:1:2", "(1+a)%2", "a-1"},
    // ((a*-1)+3)
    {"a:0:3", "(3+3*a)%4", "-a+3"},
    // ((a*-5)+17)
    {"a:0:3", "(17+13*a)%18", "-a*5+17"},
    // (((a%2)*9)+2)
    {"a:0:3", "(2+9*a)%18", "a%2*9+2"},
    // ((a*-3)+6)
    {"a:0:2", "(6*(a+1))%9", "-a*3+6"},
    // (((x*-1)+(y*-1))+9)
    {"x:0:3,y:0:3", "(9+9*x+9*y)%10", "-x-y+9"},
    // (((x*-1)+(y%3))+10)
    {"x:0:2,y:0:4", "(10+12*x+y%3)%13", "-x+y%3+10"},
    // a
    {"a:0:3", "(3+3*a)//4", "a"},
    // (a+1)
    {"a:0:2", "(18+17*a+17)//18", "a+1"},
    // ((x*2)+(y*2))
    {"x:0:3,y:0:2", "(9+(9+10)*x+(8+10)*y)//10", "x*2+y*2"},
    // ((a*-3)+3)
    {"a:0:1", "(3+a)%4", "-a*3+3"},
    // ((a*-3)+15)
    {"a:4:5", "(3+a)%4", "-a*3+15"},
    // (a//4)
    {"a:0:7", "(a*4+3)//16", "a//4"},
    // (a<4)
    {"a:0:7,b:0:3", "a*4+b<16", "a<4"},
    // (a<23)
    {"uidx:0:3,a:0:1529", "uidx+a*12<4*67", "a<23"},
    // (a%9)
    {"a:0:20", "(a*10)%9", "a%9"},
    // a
    {"a:0:5", "(a*10)%9", "a"},
    // (a%4)
    {"a:0:31", "(a%12)%4", "a%4"},
    // 0
    {"a:0:31", "((4*a)%12)%4", "0"},
    // (((a*5)%12)%5)
    {"a:0:31", "((5*a)%12)%5", "a*5%12%5"},
    // (a%4)
    {"a:0:31", "(a%4)%12", "a%4"},
    // (a<4)
    {"a:0:5", "a*4<13", "a<4"},
    // ((a*-1)<0)
    {"a:0:5", "a*-2<0", "-a<0"},
    // (a//90)
    {"a:0:1800", "(a//10)//9", "a//90"},
    // ((a+2)//4)
    {"a:0:124", "(a//2+1)//2", "(a+2)//4"},
    // (((a+2)//4)*-1)
    {"a:0:124", "((-a)//2-1)//2", "-((a+2)//4)"},
    // ((((a//2)*-1)+10)//2)
    {"a:0:124", "((-a)//2+10)//2", "(-(a//2)+10)//2"},
    // (((((a//2)*-1)+5)//4)*-1)
    {"a:0:124", "((a+10)//-2+10)//-4", "-((-(a//2)+5)//4)"},
    // ((a%4)*-1)
    {"a:0:124", "(-a)%4", "-(a%4)"},
    // (a+b)
    {"a:0:2,b:0:5", "(b+a*10)%9", "a+b"},
    // (((a*-1)%10)*-1)
    {"a:-20:0", "a%10", "-(-a%10)"},
    // (a<1)
    {"a:0:6", "a+2<3", "a<1"},
    // (((a*3)+(b*3))<4)
    {"a:0:6,b:0:6", "a*6+b*6<8", "a*3+b*3<4"},
    // ((((a*3)+(b*2))+(c*4))<2)
    {"a:0:6,b:0:6,c:0:6", "a*6+b*4+c*8<4", "a*3+b*2+c*4<2"},
    // (((a+(b*28))+-29)%28)
    {"a:0:10,b:0:10", "(-29+a+b*28)%28", "(a+b*28-29)%28"},
    // 1
    {"a:0:1", "(a*-4+1)+a*4", "1"},
    // (((a+(b*20))+-20)//20)
    {"a:0:10,b:0:10", "(-40+a*2+b*40)//40", "(a+b*20-20)//20"},
    // ((((a+(b*20))+-20)%20)*2)
    {"a:0:10,b:0:10", "(-40+a*2+b*40)%40", "(a+b*20-20)%20*2"},
    // 0
    {"a:0:5", "(a-2)//4", "0"},
    // ((a+-1)//4)
    {"a:0:5", "(a-1)//4", "(a-1)//4"},
    // ((a//4)+1)
    {"a:0:5", "(a+4)//4", "a//4+1"},
    // (((a+1)//4)+1)
    {"a:0:5", "(a+5)//4", "(a+1)//4+1"},
    // ((((a+1)//2)*-1)+128)
    {"a:0:255", "(-a+256)//2", "-((a+1)//2)+128"},
    // ((a*-2)+4)
    {"a:0:10", "(a*-8+16)//4", "-a*2+4"},
    // (a//2)
    {"a:0:10", "(a*4)//8", "a//2"},
    // (((a*-1)+1)//2)
    {"a:0:10", "(a*-4+4)//8", "(-a+1)//2"},
    // ((((a*-1)+1)%2)*4)
    {"a:0:10", "(a*-4+4)%8", "(-a+1)%2*4"},
    // 0
    {"a:0:10", "(a*-8+20)%4", "0"},
    // -1
    {"a:0:2", "(a-12)//8", "-1"},
    // (((idx*10)//11)*-1)
    {"idx:0:9", "(idx*-10)//11", "-(idx*10//11)"},
    // (idx%2)
    {"idx:0:16", "(idx*4)%8//4", "idx%2"},
    // ((idx//4)+1)
    {"idx:0:100", "(-idx+199)//-4+50", "idx//4+1"},
    // ((idx+3)//4)
    {"idx:0:100", "(-idx+200)//-4+50", "(idx+3)//4"},
    // ((idx+2)//4)
    {"idx:0:100", "(-idx+201)//-4+50", "(idx+2)//4"},
    // ((gidx0//20)+1)
    {"gidx0:0:24", "(gidx0+20)//20", "gidx0//20+1"},
    // (((gidx0+1)//20)+1)
    {"gidx0:0:24", "(gidx0+21)//20", "(gidx0+1)//20+1"},
    // ((((((gidx0//5)+lidx2)//5)+lidx1)//2)+(((gidx2*32)+(gidx1*8))+(lidx0*16))): one division of the rest instead of two nested ones
    {"gidx0:0:24,gidx1:0:1,gidx2:0:255,lidx0:0:1,lidx1:0:15,lidx2:0:3", "(gidx2*640+gidx1*160+(gidx0//5)*2+lidx0*320+lidx1*10+lidx2*2+1)//20", "gidx1*8+gidx2*32+lidx0*16+(lidx1*5+lidx2+gidx0//5)//10"},
    // (((gidx0*2)+lidx2)//5)
    {"gidx0:0:7,lidx2:0:1", "(gidx0*4+lidx2*2+1)//10", "(gidx0*2+lidx2)//5"},
    // (((gidx0*2)+lidx2)//5)
    {"gidx0:0:7,lidx2:0:1,lidx3:0:1", "(gidx0*4+lidx2*2+lidx3)//10", "(gidx0*2+lidx2)//5"},
    // (gidx0//5)
    {"gidx0:0:7,lidx2:0:1", "(gidx0*2+lidx2)//10", "gidx0//5"},
    // (((lidx2//2)+gidx0)//3): gcd 2 cancels first: same function as ((lidx2//2)+gidx0)//3
    {"gidx0:0:7,lidx2:0:12,lidx3:0:1", "(gidx0*4+lidx2*2+lidx3)//12", "(gidx0*2+lidx2)//6"},
    // 2
    {"x:20:23,y:8:10", "x//y", "2"},
    // (x+(y*-2))
    {"x:20:23,y:8:10", "x%y", "x-y*2"},
    // (((gidx*2)+(lidx//4))+1)
    {"gidx:0:124,lidx:0:7", "(-gidx*8-lidx+999)//-4+250", "gidx*2+lidx//4+1"},
    // ((gidx*2)+((lidx+3)//4))
    {"gidx:0:124,lidx:0:7", "(-gidx*8-lidx+1000)//-4+250", "gidx*2+(lidx+3)//4"},
    // (((lidx0+lidx1)+25)//32)
    {"lidx0:0:7,lidx1:0:7", "((-lidx0-lidx1+134)//(-32))+4", "(lidx0+lidx1+25)//32"},
    // 0
    {"lidx0:0:7,lidx1:0:7", "((-lidx0-lidx1+142)//(-32))+4", "0"},
    // ((a*31)+1)
    {"a:0:2", "(31*a+1)%30+((31*a+1)//30)*30", "a*31+1"},
    // ((b*16)+2)
    {"b:0:100", "(16*b+2)%18+((16*b+2)//18)*18", "b*16+2"},
    // (gidx+2559)
    {"gidx:0:2559", "(gidx+2561)//4+(gidx+2562)//4+(gidx+2560)//4+(gidx+2559)//4", "gidx+2559"},
    // ((gidx*2)+5118)
    {"gidx:0:2559", "2*((gidx+2561)//4)+2*((gidx+2562)//4)+2*((gidx+2560)//4)+2*((gidx+2559)//4)", "gidx*2+5118"},
    // gidx
    {"gidx:0:3", "(gidx)//4+(gidx+2)//4+(gidx+3)//4+(gidx+1)//4", "gidx"},
    // (gidx+2562)
    {"gidx:0:2559", "(gidx+2559)//2+(gidx+2560)//2+3", "gidx+2562"},
};

TEST(SymbolicTinygradParity, SimplifiesAsTinygradDoes) {
  for (const ParityCase& c : kCases) {
    ExprOptions o = parse_bounds(c.vars);
    UOp in = parse_expr(c.expr, o);
    UOp out = simplify(in);
    EXPECT_EQ(print_expr(out), c.expected) << c.expr << " with " << c.vars;
    auto m = find_mismatch(in, out, 1 << 16, 2000, 3);
    EXPECT_FALSE(m) << c.expr << ": " << (m ? m->to_string() : "");
  }
}

}  // namespace
}  // namespace tunebed
