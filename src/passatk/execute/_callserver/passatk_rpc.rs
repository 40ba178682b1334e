// passatk's call channel for Rust (edition 2015 and later, rustc 1.63): a call server for the sample, a
// proxy for the judge. passatk.execute.judged compiles this crate once (an rlib in passatk's cache) and
// links it to both programs (extern crate passatk_rpc); the entry point's
// declared types pick the codecs (Enc, Dec). Values: an integer (or a char, as its code point) is a JSON
// integer (range-checked), a float ["f", "<shortest round-trip text>"], a string a JSON string of bytes
// (every byte outside printable ASCII as \u00XX), a Vec ["l", ...], a tuple ["t", ...], a HashMap
// ["d", ["t", key, value], ...], an Option ["o"] or ["o", value], () null.
#![allow(dead_code, non_snake_case)]
use std::collections::HashMap;
use std::fs::File;
use std::hash::Hash;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::io::FromRawFd;
use std::sync::Mutex;

const LINE_LIMIT: u64 = 16 << 20;
const DEPTH_LIMIT: usize = 200;
const BROKEN: i32 = 3; // the judge's exit status when the sample's process ended or broke the protocol

pub enum J {
    Null,
    Bool(bool),
    Int(i128),
    Str(Vec<u8>),
    Arr(Vec<J>),
}
pub struct Bad(pub String);
fn bad<T>(why: &str) -> Result<T, Bad> {
    Err(Bad(why.to_string()))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}
impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }
    fn word(&mut self, w: &[u8], j: J) -> Result<J, Bad> {
        if self.s[self.i..].starts_with(w) {
            self.i += w.len();
            Ok(j)
        } else {
            bad("not JSON")
        }
    }
    fn string(&mut self) -> Result<Vec<u8>, Bad> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = match self.s.get(self.i) {
                Some(c) => *c,
                None => return bad("an unterminated string"),
            };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let e = match self.s.get(self.i) {
                        Some(e) => *e,
                        None => return bad("an unterminated string"),
                    };
                    self.i += 1;
                    out.push(match e {
                        b'"' | b'\\' | b'/' => e,
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).and_then(|h| std::str::from_utf8(h).ok());
                            let code = hex.and_then(|h| u32::from_str_radix(h, 16).ok());
                            self.i += 4;
                            match code {
                                Some(code) if code < 256 => code as u8,
                                _ => return bad("a string character above \\u00ff"),
                            }
                        }
                        _ => return bad("a bad escape"),
                    });
                }
                c if c < 0x20 => return bad("a control character in a string"),
                c => out.push(c),
            }
        }
    }
    fn value(&mut self, depth: usize) -> Result<J, Bad> {
        if depth > DEPTH_LIMIT {
            return bad("nested more than 200 deep");
        }
        self.ws();
        match self.s.get(self.i).cloned() {
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(J::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(J::Arr(items));
                        }
                        _ => return bad("expected , or ]"),
                    }
                }
            }
            Some(b'"') => self.string().map(J::Str),
            Some(b't') => self.word(b"true", J::Bool(true)),
            Some(b'f') => self.word(b"false", J::Bool(false)),
            Some(b'n') => self.word(b"null", J::Null),
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                self.i += 1;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                text.parse::<i128>().map(J::Int).or_else(|_| bad("a bad integer"))
            }
            _ => bad("not JSON"),
        }
    }
}

pub fn parse(line: &[u8]) -> Result<J, Bad> {
    let mut p = Parser { s: line, i: 0 };
    let j = p.value(0)?;
    p.ws();
    if p.i != line.len() {
        return bad("text after the value");
    }
    Ok(j)
}

fn quote(o: &mut Vec<u8>, s: &[u8]) {
    o.push(b'"');
    for &c in s {
        if c == b'"' || c == b'\\' {
            o.push(b'\\');
            o.push(c);
        } else if (0x20..0x7f).contains(&c) {
            o.push(c);
        } else {
            let _ = write!(o, "\\u{:04x}", c);
        }
    }
    o.push(b'"');
}

fn items<'a>(j: &'a J, tag: &str) -> Result<&'a [J], Bad> {
    match j {
        J::Arr(a) if !a.is_empty() => match &a[0] {
            J::Str(t) if t.as_slice() == tag.as_bytes() => Ok(&a[1..]),
            _ => bad("a tag the type does not expect"),
        },
        _ => bad("a value the type does not expect"),
    }
}

pub trait Enc {
    fn enc(&self, o: &mut Vec<u8>);
}
pub trait Dec: Sized {
    fn dec(j: &J) -> Result<Self, Bad>;
}
macro_rules! ints {
    ($($t:ty)*) => {$(
        impl Enc for $t {
            fn enc(&self, o: &mut Vec<u8>) { let _ = write!(o, "{}", self); }
        }
        impl Dec for $t {
            fn dec(j: &J) -> Result<Self, Bad> {
                match j {
                    J::Int(n) => <$t as std::convert::TryFrom<i128>>::try_from(*n).or_else(|_| bad("an integer out of range")),
                    _ => bad("expected an integer"),
                }
            }
        }
    )*};
}
ints!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);
macro_rules! floats {
    ($($t:ty)*) => {$(
        impl Enc for $t {
            fn enc(&self, o: &mut Vec<u8>) {
                o.extend_from_slice(b"[\"f\",");
                quote(o, format!("{:?}", self).as_bytes());
                o.push(b']');
            }
        }
        impl Dec for $t {
            fn dec(j: &J) -> Result<Self, Bad> {
                match items(j, "f")? {
                    [J::Str(s)] => std::str::from_utf8(s).ok().and_then(|s| s.parse::<$t>().ok()).map_or_else(|| bad("a bad float"), Ok),
                    _ => bad("expected [\"f\", text]"),
                }
            }
        }
    )*};
}
floats!(f32 f64);
impl Enc for bool {
    fn enc(&self, o: &mut Vec<u8>) {
        o.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}
impl Dec for bool {
    fn dec(j: &J) -> Result<Self, Bad> {
        match j {
            J::Bool(b) => Ok(*b),
            _ => bad("expected a boolean"),
        }
    }
}
impl Enc for char {
    fn enc(&self, o: &mut Vec<u8>) {
        (*self as u32).enc(o);
    }
}
impl Dec for char {
    fn dec(j: &J) -> Result<Self, Bad> {
        std::char::from_u32(u32::dec(j)?).map_or_else(|| bad("not a char"), Ok)
    }
}
impl Enc for () {
    fn enc(&self, o: &mut Vec<u8>) {
        o.extend_from_slice(b"null");
    }
}
impl Dec for () {
    fn dec(j: &J) -> Result<Self, Bad> {
        match j {
            J::Null => Ok(()),
            _ => bad("expected null"),
        }
    }
}
impl Enc for str {
    fn enc(&self, o: &mut Vec<u8>) {
        quote(o, self.as_bytes());
    }
}
impl Enc for String {
    fn enc(&self, o: &mut Vec<u8>) {
        quote(o, self.as_bytes());
    }
}
impl Dec for String {
    fn dec(j: &J) -> Result<Self, Bad> {
        match j {
            J::Str(b) => String::from_utf8(b.clone()).or_else(|_| bad("a string that is not UTF-8")),
            _ => bad("expected a string"),
        }
    }
}
impl Dec for &'static str {
    fn dec(j: &J) -> Result<Self, Bad> {
        Ok(Box::leak(String::dec(j)?.into_boxed_str()))
    }
}
impl<'a, T: Enc + ?Sized> Enc for &'a T {
    fn enc(&self, o: &mut Vec<u8>) {
        (**self).enc(o);
    }
}
impl<'a, T: Enc + ?Sized> Enc for &'a mut T {
    fn enc(&self, o: &mut Vec<u8>) {
        (**self).enc(o);
    }
}
impl<T: Enc> Enc for [T] {
    fn enc(&self, o: &mut Vec<u8>) {
        o.extend_from_slice(b"[\"l\"");
        for x in self {
            o.push(b',');
            x.enc(o);
        }
        o.push(b']');
    }
}
impl<T: Enc> Enc for Vec<T> {
    fn enc(&self, o: &mut Vec<u8>) {
        self.as_slice().enc(o);
    }
}
impl<T: Dec> Dec for Vec<T> {
    fn dec(j: &J) -> Result<Self, Bad> {
        items(j, "l")?.iter().map(T::dec).collect()
    }
}
impl<T: Enc> Enc for Option<T> {
    fn enc(&self, o: &mut Vec<u8>) {
        o.extend_from_slice(b"[\"o\"");
        if let Some(x) = self {
            o.push(b',');
            x.enc(o);
        }
        o.push(b']');
    }
}
impl<T: Dec> Dec for Option<T> {
    fn dec(j: &J) -> Result<Self, Bad> {
        match items(j, "o")? {
            [] => Ok(None),
            [x] => Ok(Some(T::dec(x)?)),
            _ => bad("expected [\"o\"] or [\"o\", value]"),
        }
    }
}
impl<K: Enc, V: Enc, S> Enc for HashMap<K, V, S> {
    fn enc(&self, o: &mut Vec<u8>) {
        o.extend_from_slice(b"[\"d\"");
        for (k, v) in self {
            o.extend_from_slice(b",[\"t\",");
            k.enc(o);
            o.push(b',');
            v.enc(o);
            o.push(b']');
        }
        o.push(b']');
    }
}
impl<K: Dec + Eq + Hash, V: Dec> Dec for HashMap<K, V> {
    fn dec(j: &J) -> Result<Self, Bad> {
        let mut m = HashMap::new();
        for pair in items(j, "d")? {
            match items(pair, "t")? {
                [k, v] => {
                    if m.insert(K::dec(k)?, V::dec(v)?).is_some() {
                        return bad("a key twice in a map");
                    }
                }
                _ => return bad("expected [\"t\", key, value]"),
            }
        }
        Ok(m)
    }
}
macro_rules! tuples {
    ($(($($t:ident $i:tt),*))*) => {$(
        impl<$($t: Enc),*> Enc for ($($t,)*) {
            fn enc(&self, o: &mut Vec<u8>) {
                o.extend_from_slice(b"[\"t\"");
                $(o.push(b','); self.$i.enc(o);)*
                o.push(b']');
            }
        }
        impl<$($t: Dec),*> Dec for ($($t,)*) {
            fn dec(j: &J) -> Result<Self, Bad> {
                match items(j, "t")? {
                    [$($t),*] => Ok(($(Dec::dec($t)?,)*)),
                    _ => bad("a tuple of another length"),
                }
            }
        }
    )*};
}
tuples!((A 0, B 1) (A 0, B 1, C 2) (A 0, B 1, C 2, D 3));

fn read_line(r: &mut BufReader<File>) -> Result<Vec<u8>, &'static str> {
    let mut line = Vec::new();
    let _ = r.by_ref().take(LINE_LIMIT + 1).read_until(b'\n', &mut line);
    match line.pop() {
        Some(b'\n') => Ok(line),
        _ if line.len() as u64 >= LINE_LIMIT => Err("a line longer than 16 MiB"),
        _ => Err("the sample's process ended"),
    }
}

fn channel() -> (BufReader<File>, File) {
    let file = unsafe { File::from_raw_fd(3) };
    let writer = file.try_clone().unwrap_or_else(|_| std::process::exit(BROKEN));
    (BufReader::with_capacity(1 << 16, file), writer)
}

/// The call server's loop: each call's arguments to `f`, its answer (or what it raised) back, until the channel closes.
pub fn serve(f: &mut dyn FnMut(&[J]) -> Result<Vec<u8>, Bad>) {
    let (mut r, mut w) = channel();
    loop {
        let line = match read_line(&mut r) {
            Ok(line) => line,
            Err(_) => std::process::exit(0),
        };
        let answered = match parse(&line) {
            Ok(J::Arr(args)) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&args))),
            _ => Ok(bad("not a list of arguments")),
        };
        let mut o = Vec::new();
        match answered {
            Ok(Ok(value)) => {
                o.extend_from_slice(b"[\"ok\",");
                o.extend_from_slice(&value);
            }
            Ok(Err(Bad(why))) => {
                o.extend_from_slice(b"[\"raised\",");
                quote(&mut o, format!("passatk: a call the server cannot read: {}", why).as_bytes());
            }
            Err(payload) => {
                let said = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                o.extend_from_slice(b"[\"raised\",");
                quote(&mut o, said.as_bytes());
            }
        }
        o.extend_from_slice(b"]\n");
        if w.write_all(&o).is_err() {
            std::process::exit(0);
        }
    }
}

/// The call server's check that a call has `n` arguments.
pub fn arity(args: &[J], n: usize) -> Result<(), Bad> {
    if args.len() == n {
        Ok(())
    } else {
        bad("a call with another number of arguments")
    }
}

/// The encoding of one value (an argument in the judge, a return value in the call server).
pub fn enc<T: Enc + ?Sized>(value: &T) -> Vec<u8> {
    let mut o = Vec::new();
    value.enc(&mut o);
    o
}

static CHANNEL: Mutex<Option<(BufReader<File>, File)>> = Mutex::new(None);

fn broken(why: &str) -> ! {
    eprintln!("passatk: protocol violation: {}", why);
    std::process::exit(BROKEN)
}

/// The judge's proxy: the encoded arguments to the call server, its answer decoded into the declared return type.
pub fn call<R: Dec>(args: &[Vec<u8>]) -> R {
    let mut held = CHANNEL.lock().unwrap_or_else(|e| e.into_inner());
    if held.is_none() {
        *held = Some(channel());
    }
    let (r, w) = held.as_mut().unwrap();
    let mut o = vec![b'['];
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        o.extend_from_slice(a);
    }
    o.extend_from_slice(b"]\n");
    if w.write_all(&o).is_err() {
        eprintln!("passatk: the sample's process ended");
        std::process::exit(BROKEN);
    }
    let line = match read_line(r) {
        Ok(line) => line,
        Err(why) if why.starts_with("the sample") => {
            eprintln!("passatk: {}", why);
            std::process::exit(BROKEN)
        }
        Err(why) => broken(why),
    };
    let answer = match parse(&line) {
        Ok(J::Arr(a)) => a,
        Ok(_) => broken("expected [\"ok\", value] or [\"raised\", message]"),
        Err(Bad(why)) => broken(&why),
    };
    drop(held);
    match answer.as_slice() {
        [J::Str(tag), value] if tag.as_slice() == b"ok" => match R::dec(value) {
            Ok(v) => v,
            Err(Bad(why)) => broken(&why),
        },
        [J::Str(tag), J::Str(message)] if tag.as_slice() == b"raised" => {
            panic!("passatk: the sample raised: {}", String::from_utf8_lossy(message))
        }
        _ => broken("expected [\"ok\", value] or [\"raised\", message]"),
    }
}
