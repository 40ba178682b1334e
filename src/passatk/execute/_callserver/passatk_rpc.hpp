// passatk's call channel for C++ (C++11 and later): a call server for the sample, a proxy for the judge.
#include <string>
#include <vector>
#include <tuple>
#include <utility>
#include <exception>
#include <typeinfo>
#include <type_traits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <climits>
#include <limits>
#if __cplusplus >= 201703L  // std::any may hold maps and C strings
#ifndef PASSATK_RPC_MAPS
#define PASSATK_RPC_MAPS 1
#endif
#ifndef PASSATK_RPC_CSTR
#define PASSATK_RPC_CSTR 1
#endif
#include <optional>
#include <variant>
#include <any>
#endif
// what a signature without maps or C strings does not need (passatk.execute.judged defines these from its types)
#ifdef PASSATK_RPC_MAPS
#include <map>
#include <unordered_map>
#endif
#ifdef PASSATK_RPC_CSTR
#include <deque>
#endif
namespace passatk_rpc {
struct Bad {};
struct J {
    char k;  // n null, b bool, i integer, s string, a array
    bool b;
    long long i;
    std::string s;
    std::vector<J> a;
    J() : k('n'), b(false), i(0) {}
};
static const size_t LINE_LIMIT = 16u << 20;
J parse(const std::string& text);
void quote(std::string& o, const std::string& s);
const J& tagged(const J& j, const char* tag, size_t n);  // ["tag", item, ...] with n items (or any number when n is -1)
template <class T, class Enable = void> struct C;  // the codec of T: put(out, value), get(tree)
template <class T> struct C<T, typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, bool>::value>::type> {
    static void put(std::string& o, const T& v) {
        char buf[32];
        if (std::is_signed<T>::value) snprintf(buf, sizeof buf, "%lld", (long long)v);
        else snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
        o += buf;
    }
    static T get(const J& j) {
        if (j.k != 'i') throw Bad();
        if (std::is_signed<T>::value ? (j.i < (long long)std::numeric_limits<T>::min() || (sizeof(T) < 8 && j.i > (long long)std::numeric_limits<T>::max()))
                                     : (j.i < 0 || (sizeof(T) < 8 && (unsigned long long)j.i > (unsigned long long)std::numeric_limits<T>::max())))
            throw Bad();
        return (T)j.i;
    }
};
template <> struct C<bool> {
    static void put(std::string& o, bool v) { o += v ? "true" : "false"; }
    static bool get(const J& j) { if (j.k != 'b') throw Bad(); return j.b; }
};
template <class T> struct C<T, typename std::enable_if<std::is_floating_point<T>::value>::type> {
    static void put(std::string& o, const T& v) {
        char buf[64];
        snprintf(buf, sizeof buf, "%La", (long double)v);
        o += "[\"f\",\""; o += buf; o += "\"]";
    }
    static T get(const J& j) {
        tagged(j, "f", 1);
        if (j.a[1].k != 's') throw Bad();
        const char* s = j.a[1].s.c_str();
        char* end = 0;
        long double v = strtold(s, &end);
        if (end == s || *end) throw Bad();
        return (T)v;
    }
};
template <> struct C<std::string> {
    static void put(std::string& o, const std::string& v) { quote(o, v); }
    static std::string get(const J& j) { if (j.k != 's') throw Bad(); return j.s; }
};
#ifdef PASSATK_RPC_CSTR
template <> struct C<const char*> {  // kept alive for the run: a call's C string
    static void put(std::string& o, const char* v) { if (!v) o += "null"; else quote(o, v); }
    static const char* get(const J& j) {
        static std::deque<std::string> kept;
        if (j.k != 's') throw Bad();
        kept.push_back(j.s);
        return kept.back().c_str();
    }
};
#endif
template <class T, class A> struct C<std::vector<T, A> > {
    static void put(std::string& o, const std::vector<T, A>& v) {
        o += "[\"l\"";
        for (typename std::vector<T, A>::const_iterator it = v.begin(); it != v.end(); ++it) { o += ','; C<T>::put(o, *it); }
        o += ']';
    }
    static std::vector<T, A> get(const J& j) {
        tagged(j, "l", (size_t)-1);
        std::vector<T, A> v;
        for (size_t i = 1; i < j.a.size(); ++i) v.push_back(C<T>::get(j.a[i]));
        return v;
    }
};
template <class A, class B> struct C<std::pair<A, B> > {
    static void put(std::string& o, const std::pair<A, B>& v) {
        o += "[\"t\","; C<A>::put(o, v.first); o += ','; C<B>::put(o, v.second); o += ']';
    }
    static std::pair<A, B> get(const J& j) { tagged(j, "t", 2); return std::pair<A, B>(C<A>::get(j.a[1]), C<B>::get(j.a[2])); }
};
template <size_t... I> struct Seq {};
template <size_t N, size_t... I> struct Make : Make<N - 1, N - 1, I...> {};
template <size_t... I> struct Make<0, I...> { typedef Seq<I...> type; };
template <class... T> struct C<std::tuple<T...> > {
    template <size_t... I> static void each(std::string& o, const std::tuple<T...>& v, Seq<I...>) {
        int unused[] = {0, (o += ',', C<T>::put(o, std::get<I>(v)), 0)...};
        (void)unused;
    }
    static void put(std::string& o, const std::tuple<T...>& v) {
        o += "[\"t\"";
        each(o, v, typename Make<sizeof...(T)>::type());
        o += ']';
    }
    template <size_t... I> static std::tuple<T...> build(const J& j, Seq<I...>) { return std::tuple<T...>(C<T>::get(j.a[I + 1])...); }
    static std::tuple<T...> get(const J& j) { tagged(j, "t", sizeof...(T)); return build(j, typename Make<sizeof...(T)>::type()); }
};
#ifdef PASSATK_RPC_MAPS
template <class M, class K, class V> struct MapC {
    static void put(std::string& o, const M& v) {
        o += "[\"d\"";
        for (typename M::const_iterator it = v.begin(); it != v.end(); ++it) {
            o += ",[\"t\","; C<K>::put(o, it->first); o += ','; C<V>::put(o, it->second); o += ']';
        }
        o += ']';
    }
    static M get(const J& j) {
        tagged(j, "d", (size_t)-1);
        M m;
        for (size_t i = 1; i < j.a.size(); ++i) {
            tagged(j.a[i], "t", 2);
            m[C<K>::get(j.a[i].a[1])] = C<V>::get(j.a[i].a[2]);
        }
        return m;
    }
};
template <class K, class V, class Cmp, class A> struct C<std::map<K, V, Cmp, A> > : MapC<std::map<K, V, Cmp, A>, K, V> {};
template <class K, class V, class H, class E, class A> struct C<std::unordered_map<K, V, H, E, A> > : MapC<std::unordered_map<K, V, H, E, A>, K, V> {};
#endif
#if __cplusplus >= 201703L
template <class T> struct C<std::optional<T> > {
    static void put(std::string& o, const std::optional<T>& v) {
        o += "[\"o\"";
        if (v) { o += ','; C<T>::put(o, *v); }
        o += ']';
    }
    static std::optional<T> get(const J& j) {
        tagged(j, "o", (size_t)-1);
        if (j.a.size() == 1) return std::nullopt;
        if (j.a.size() != 2) throw Bad();
        return C<T>::get(j.a[1]);
    }
};
template <class... T> struct C<std::variant<T...> > {
    typedef std::variant<T...> V;
    template <size_t I> static V pick(const J& j, size_t n) {
        if constexpr (I < sizeof...(T)) {
            if (n == I) return V(std::in_place_index<I>, C<std::variant_alternative_t<I, V> >::get(j));
            return pick<I + 1>(j, n);
        } else throw Bad();
    }
    static void put(std::string& o, const V& v) {
        if (v.valueless_by_exception()) throw Bad();
        o += "[\"v\"," + std::to_string(v.index()) + ",";
        std::visit([&o](const auto& x) { C<std::decay_t<decltype(x)> >::put(o, x); }, v);
        o += ']';
    }
    static V get(const J& j) {
        tagged(j, "v", 2);
        if (j.a[1].k != 'i' || j.a[1].i < 0) throw Bad();
        return pick<0>(j.a[2], (size_t)j.a[1].i);
    }
};
struct Unknown { std::string type; };  // an std::any of a type the channel does not carry: equal to nothing
template <class T> bool any_put(std::string& o, const std::any& v, const char* tag) {
    if (v.type() != typeid(T)) return false;
    o += "[\"a\",\""; o += tag; o += "\","; C<T>::put(o, std::any_cast<const T&>(v)); o += ']';
    return true;
}
template <> struct C<std::any> {
    static void put(std::string& o, const std::any& v) {
        if (!v.has_value()) { o += "[\"a\",\"\"]"; return; }
        if (any_put<long>(o, v, "long") || any_put<int>(o, v, "int") || any_put<long long>(o, v, "long long") ||
            any_put<double>(o, v, "double") || any_put<float>(o, v, "float") || any_put<bool>(o, v, "bool") ||
            any_put<char>(o, v, "char") || any_put<std::string>(o, v, "string") || any_put<const char*>(o, v, "const char*") ||
            any_put<std::vector<long> >(o, v, "vector<long>") || any_put<std::vector<std::string> >(o, v, "vector<string>") ||
            any_put<std::map<long, long> >(o, v, "map<long,long>") || any_put<std::map<std::string, long> >(o, v, "map<string,long>"))
            return;
        o += "[\"a\",\"?\",";
        quote(o, v.type().name());
        o += ']';
    }
    static std::any get(const J& j) {
        tagged(j, "a", (size_t)-1);
        if (j.a.size() == 1 || j.a[1].k != 's') throw Bad();
        const std::string& t = j.a[1].s;
        if (t.empty() && j.a.size() == 2) return std::any();
        if (j.a.size() != 3) throw Bad();
        const J& x = j.a[2];
        if (t == "long") return C<long>::get(x);
        if (t == "int") return C<int>::get(x);
        if (t == "long long") return C<long long>::get(x);
        if (t == "double") return C<double>::get(x);
        if (t == "float") return C<float>::get(x);
        if (t == "bool") return C<bool>::get(x);
        if (t == "char") return C<char>::get(x);
        if (t == "string") return C<std::string>::get(x);
        if (t == "const char*") return C<const char*>::get(x);
        if (t == "vector<long>") return C<std::vector<long> >::get(x);
        if (t == "vector<string>") return C<std::vector<std::string> >::get(x);
        if (t == "map<long,long>") return C<std::map<long, long> >::get(x);
        if (t == "map<string,long>") return C<std::map<std::string, long> >::get(x);
        if (t == "?") { Unknown u; u.type = C<std::string>::get(x); return u; }
        throw Bad();
    }
};
#endif
struct Channel {
    int fd;
    std::string buf;
    explicit Channel(int f) : fd(f) {}
    bool line(std::string& out);  // false at the end of the channel; a line past the limit is the end too
    bool send(const std::string& s);
};
[[noreturn]] void broken(const char* why);
void ignore_sigpipe();
[[noreturn]] void raised(const char* what);  // the sample's exception: a failed call
inline void put_args(std::string&) {}
template <class T, class... R> void put_args(std::string& o, const T& first, const R&... rest) {
    if (o.size() > 1) o += ',';
    C<T>::put(o, first);
    put_args(o, rest...);
}
template <class R, class... A, size_t... I> R invoke(R (*f)(A...), const J& args, Seq<I...>) {
    std::tuple<typename std::decay<A>::type...> values(C<typename std::decay<A>::type>::get(args.a[I])...);
    return f(std::get<I>(values)...);
}
// The sample's side: answer each call on descriptor 3 until the judge closes it.
template <class R, class... A> int serve(R (*f)(A...)) {
    Channel ch(3);
    std::string line;
    while (ch.line(line)) {
        std::string out;
        try {
            J args = parse(line);
            if (args.k != 'a' || args.a.size() != sizeof...(A)) return 2;
            R r = invoke(f, args, typename Make<sizeof...(A)>::type());
            out = "[\"ok\",";
            C<R>::put(out, r);
            out += "]\n";
        } catch (Bad&) {
            return 2;
        } catch (const std::exception& e) {
            out = "[\"raised\",";
            quote(out, e.what());
            out += "]\n";
        } catch (...) {
            out = "[\"raised\",\"an exception\"]\n";
        }
        if (!ch.send(out)) return 0;
    }
    return 0;
}
// The judge's side: the entry point's body, which asks the sample's process on descriptor 3.
template <class R, class... A, class... B> R call(R (*)(A...), const B&... args) {
    static Channel ch(3);
    static bool ready = false;
    if (!ready) { ignore_sigpipe(); ready = true; }
    std::string out = "[";
    put_args<typename std::decay<A>::type...>(out, args...);
    out += "]\n";
    if (!ch.send(out)) broken("the sample's process ended while the tests were calling it");
    std::string line;
    if (!ch.line(line)) broken("the sample's process ended while the tests were waiting for it");
    try {
        J r = parse(line);
        if (r.k == 'a' && r.a.size() == 2 && r.a[0].k == 's') {
            if (r.a[0].s == "ok") return C<R>::get(r.a[1]);
            if (r.a[0].s == "raised" && r.a[1].k == 's') raised(r.a[1].s.c_str());
        }
    } catch (Bad&) {
    }
    broken("protocol violation: an answer the tests cannot read");
}
}  // namespace passatk_rpc
#ifdef PASSATK_RPC_IMPL
#include <cerrno>
#include <csignal>
#include <unistd.h>
// the runtime, compiled once (passatk.execute.judged.cpp_runtime) and linked into both programs
namespace passatk_rpc {
struct Parser {
    const char *p, *e;
    int depth;
    void ws() { while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p; }
    void lit(const char* w) {
        size_t n = strlen(w);
        if ((size_t)(e - p) < n || strncmp(p, w, n) != 0) throw Bad();
        p += n;
    }
    static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        throw Bad();
    }
    std::string str() {
        std::string out;
        ++p;
        for (;;) {
            if (p >= e) throw Bad();
            char c = *p++;
            if (c == '"') return out;
            if (c != '\\') { out += c; continue; }
            if (p >= e) throw Bad();
            c = *p++;
            switch (c) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    if (e - p < 4) throw Bad();
                    unsigned v = (hex(p[0]) << 12) | (hex(p[1]) << 8) | (hex(p[2]) << 4) | hex(p[3]);
                    p += 4;
                    if (v > 0xff) throw Bad();  // bytes only: what this side's encoder writes
                    out += (char)v;
                    break;
                }
                default: throw Bad();
            }
        }
    }
    J value() {
        if (++depth > 200) throw Bad();
        ws();
        if (p >= e) throw Bad();
        J j;
        char c = *p;
        if (c == 'n') { lit("null"); }
        else if (c == 't') { lit("true"); j.k = 'b'; j.b = true; }
        else if (c == 'f') { lit("false"); j.k = 'b'; }
        else if (c == '"') { j.k = 's'; j.s = str(); }
        else if (c == '[') {
            ++p;
            j.k = 'a';
            ws();
            if (p < e && *p == ']') ++p;
            else for (;;) {
                j.a.push_back(value());
                ws();
                if (p >= e) throw Bad();
                if (*p == ',') { ++p; continue; }
                if (*p == ']') { ++p; break; }
                throw Bad();
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            bool neg = c == '-';
            if (neg) ++p;
            if (p >= e || *p < '0' || *p > '9') throw Bad();
            unsigned long long v = 0;
            while (p < e && *p >= '0' && *p <= '9') {
                unsigned d = *p++ - '0';
                if (v > (ULLONG_MAX - d) / 10) throw Bad();
                v = v * 10 + d;
            }
            if (neg ? v > (unsigned long long)LLONG_MAX + 1 : v > (unsigned long long)LLONG_MAX) throw Bad();
            j.k = 'i';
            j.i = neg ? (long long)(0 - v) : (long long)v;
        } else throw Bad();
        --depth;
        return j;
    }
};
J parse(const std::string& text) {
    Parser ps = {text.data(), text.data() + text.size(), 0};
    J j = ps.value();
    ps.ws();
    if (ps.p != ps.e) throw Bad();
    return j;
}
void quote(std::string& o, const std::string& s) {
    static const char* digits = "0123456789abcdef";
    o += '"';
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
        else if (c < 0x20 || c >= 0x7f) { o += "\\u00"; o += digits[c >> 4]; o += digits[c & 15]; }
        else o += (char)c;
    }
    o += '"';
}
const J& tagged(const J& j, const char* tag, size_t n) {  // ["tag", item, ...] with n items (or any number when n is -1)
    if (j.k != 'a' || j.a.empty() || j.a[0].k != 's' || j.a[0].s != tag) throw Bad();
    if (n != (size_t)-1 && j.a.size() != n + 1) throw Bad();
    return j;
}
bool Channel::line(std::string& out) {
        size_t from = 0;
        for (;;) {
            size_t nl = buf.find('\n', from);
            if (nl != std::string::npos) {
                out.assign(buf, 0, nl);
                buf.erase(0, nl + 1);
                return true;
            }
            from = buf.size();
            if (buf.size() > LINE_LIMIT) return false;
            char tmp[65536];
            ssize_t n = ::read(fd, tmp, sizeof tmp);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            buf.append(tmp, (size_t)n);
        }
    }
bool Channel::send(const std::string& s) {
        size_t at = 0;
        while (at < s.size()) {
            ssize_t n = ::write(fd, s.data() + at, s.size() - at);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            at += (size_t)n;
        }
        return true;
    }

void broken(const char* why) {
    fprintf(stderr, "passatk: %s\n", why);
    fflush(stderr);
    _exit(3);
}
void ignore_sigpipe() { signal(SIGPIPE, SIG_IGN); }
void raised(const char* what) {
    fprintf(stderr, "passatk: the sample raised: %.200s\n", what);
    fflush(stderr);
    _exit(1);
}
}  // namespace passatk_rpc
#endif
