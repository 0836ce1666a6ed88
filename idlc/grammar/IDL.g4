// OMG IDL 4.2, the building blocks DDS users write (core data types, anonymous types,
// annotations, the XTypes extensions for bitmasks and integer types), written for
// Spindle's idlc from the IDL 4.2 specification (formal/18-01-05, clause 7.4).
//
// Input is the output of idlc's own preprocessor: comments are already removed and every
// directive line is blank, except `#pragma keylist`, which reaches the lexer as a single
// KEYLIST_PRAGMA token whose text the AST builder splits.
//
// Shift operators are two separate '<' / '>' tokens (checked for adjacency by the AST
// builder) so that `sequence<sequence<long>>` needs no space between the closing angles.
grammar IDL;

// ============================================================================ parser

specification : definition* EOF ;

definition
  : annotationAppl* ( moduleDcl | typeDcl | constDcl ) ';'
  | annotationDcl ';'
  | KEYLIST_PRAGMA
  ;

moduleDcl : KW_MODULE identifier '{' definition* '}' ;

typeDcl
  : structDcl
  | structForwardDcl
  | unionDcl
  | unionForwardDcl
  | enumDcl
  | bitmaskDcl
  | bitsetDcl
  | typedefDcl
  ;

// ---------------------------------------------------------------------------- struct
structDcl : KW_STRUCT identifier ( ':' scopedName )? '{' member* '}' ;
structForwardDcl : KW_STRUCT identifier ;
member : annotationAppl* typeSpec declarators ';' ;

// ---------------------------------------------------------------------------- union
unionDcl
  : KW_UNION identifier KW_SWITCH '(' annotationAppl* typeSpec ')' '{' switchCase+ '}' ;
unionForwardDcl : KW_UNION identifier ;
switchCase : annotationAppl* caseLabel+ annotationAppl* typeSpec declarator ';' ;
caseLabel
  : KW_CASE constExpr ':'
  | KW_DEFAULT ':'
  ;

// ---------------------------------------------------------------------------- enum, bitmask
enumDcl : KW_ENUM identifier '{' enumerator ( ',' enumerator )* '}' ;
enumerator : annotationAppl* identifier ;
bitmaskDcl : KW_BITMASK identifier '{' bitValue ( ',' bitValue )* '}' ;
bitValue : annotationAppl* identifier ;

// ---------------------------------------------------------------------------- bitset (IDL 4.2 7.4.13.4.3.2)
bitsetDcl : KW_BITSET identifier ( ':' scopedName )? '{' bitfield* '}' ;
// No identifier: anonymous padding bits.
bitfield : annotationAppl* bitfieldSpec ( identifier ( ',' identifier )* )? ';' ;
bitfieldSpec : KW_BITFIELD '<' constExpr ( ',' typeSpec )? '>' ;

// ---------------------------------------------------------------------------- annotation declarations
// `@annotation Name { member; ... };` (IDL 4.2 7.4.15.4.1). The '@annotation' keyword is a
// single token (it needs the whitespace after it), so `@annotation_x` stays an application.
annotationDcl : ANNOTATION_DCL identifier '{' annotationBody* '}' ;
annotationBody
  : typeSpec identifier ( KW_DEFAULT constExpr )? ';'
  | ( enumDcl | constDcl | typedefDcl ) ';'
  ;

// ---------------------------------------------------------------------------- typedef, const
typedefDcl : KW_TYPEDEF annotationAppl* typeSpec declarators ;
constDcl : KW_CONST typeSpec identifier '=' constExpr ;

declarators : declarator ( ',' declarator )* ;
declarator : identifier arraySize* ;
arraySize : '[' constExpr ']' ;

// ---------------------------------------------------------------------------- types
typeSpec
  : baseType
  | stringType
  | sequenceType
  | mapType
  | scopedName
  ;

baseType
  : KW_SHORT
  | KW_LONG
  | KW_LONG KW_LONG
  | KW_UNSIGNED KW_SHORT
  | KW_UNSIGNED KW_LONG
  | KW_UNSIGNED KW_LONG KW_LONG
  | KW_INT8 | KW_UINT8 | KW_INT16 | KW_UINT16 | KW_INT32 | KW_UINT32 | KW_INT64 | KW_UINT64
  | KW_CHAR
  | KW_WCHAR
  | KW_BOOLEAN
  | KW_OCTET
  | KW_FLOAT
  | KW_DOUBLE
  | KW_LONG KW_DOUBLE
  ;

stringType : ( KW_STRING | KW_WSTRING ) ( '<' constExpr '>' )? ;
sequenceType : KW_SEQUENCE '<' typeSpec ( ',' constExpr )? '>' ;
mapType : KW_MAP '<' typeSpec ',' typeSpec ( ',' constExpr )? '>' ;

scopedName : '::'? identifier ( '::' identifier )* ;
identifier : ID ;

// ---------------------------------------------------------------------------- expressions
// Precedence from loosest to tightest: | ^ & shift additive multiplicative unary.
constExpr : orExpr ;
orExpr : xorExpr ( '|' xorExpr )* ;
xorExpr : andExpr ( '^' andExpr )* ;
andExpr : shiftExpr ( '&' shiftExpr )* ;
shiftExpr : addExpr ( shiftOp addExpr )* ;
shiftOp : '<' '<' | '>' '>' ;
addExpr : mulExpr ( ( '+' | '-' ) mulExpr )* ;
mulExpr : unaryExpr ( ( '*' | '/' | '%' ) unaryExpr )* ;
unaryExpr
  : ( '-' | '+' | '~' ) unaryExpr
  | primaryExpr
  ;
primaryExpr
  : scopedName
  | literal
  | '(' constExpr ')'
  ;
literal
  : INTEGER_LITERAL
  | FLOAT_LITERAL
  | CHAR_LITERAL
  | WCHAR_LITERAL
  | STRING_LITERAL+
  | WSTRING_LITERAL+
  | KW_TRUE
  | KW_FALSE
  ;

// ---------------------------------------------------------------------------- annotations
annotationAppl : '@' annotationName ( '(' annotationParams? ')' )? ;
annotationName : scopedName | KW_DEFAULT ;
annotationParams
  : annotationParam ( ',' annotationParam )*
  | constExpr
  ;
annotationParam : identifier '=' constExpr ;

// ============================================================================ lexer

KEYLIST_PRAGMA : '#' [ \t]* 'pragma' [ \t]+ 'keylist' ( [ \t] ~[\r\n]* )? ;
ANNOTATION_DCL : '@annotation' [ \t\r\n]+ ;

KW_MODULE : 'module' ;
KW_STRUCT : 'struct' ;
KW_UNION : 'union' ;
KW_SWITCH : 'switch' ;
KW_CASE : 'case' ;
KW_DEFAULT : 'default' ;
KW_ENUM : 'enum' ;
KW_BITMASK : 'bitmask' ;
KW_TYPEDEF : 'typedef' ;
KW_CONST : 'const' ;
KW_SEQUENCE : 'sequence' ;
KW_MAP : 'map' ;
KW_BITSET : 'bitset' ;
KW_BITFIELD : 'bitfield' ;
KW_STRING : 'string' ;
KW_WSTRING : 'wstring' ;
KW_SHORT : 'short' ;
KW_LONG : 'long' ;
KW_UNSIGNED : 'unsigned' ;
KW_INT8 : 'int8' ;
KW_UINT8 : 'uint8' ;
KW_INT16 : 'int16' ;
KW_UINT16 : 'uint16' ;
KW_INT32 : 'int32' ;
KW_UINT32 : 'uint32' ;
KW_INT64 : 'int64' ;
KW_UINT64 : 'uint64' ;
KW_CHAR : 'char' ;
KW_WCHAR : 'wchar' ;
KW_BOOLEAN : 'boolean' ;
KW_OCTET : 'octet' ;
KW_FLOAT : 'float' ;
KW_DOUBLE : 'double' ;
KW_TRUE : 'TRUE' ;
KW_FALSE : 'FALSE' ;

SCOPE : '::' ;
COLON : ':' ;
SEMI : ';' ;
COMMA : ',' ;
LBRACE : '{' ;
RBRACE : '}' ;
LPAREN : '(' ;
RPAREN : ')' ;
LBRACKET : '[' ;
RBRACKET : ']' ;
LANGLE : '<' ;
RANGLE : '>' ;
EQUAL : '=' ;
AT : '@' ;
PIPE : '|' ;
CARET : '^' ;
AMP : '&' ;
PLUS : '+' ;
MINUS : '-' ;
STAR : '*' ;
SLASH : '/' ;
PERCENT : '%' ;
TILDE : '~' ;

FLOAT_LITERAL
  : DIGIT+ '.' DIGIT* EXPONENT?
  | '.' DIGIT+ EXPONENT?
  | DIGIT+ EXPONENT
  ;
INTEGER_LITERAL
  : '0' [xX] HEX_DIGIT+
  | '0' [0-7]*
  | [1-9] DIGIT*
  ;
WCHAR_LITERAL : 'L' CHAR_BODY ;
CHAR_LITERAL : CHAR_BODY ;
WSTRING_LITERAL : 'L' STRING_BODY ;
STRING_LITERAL : STRING_BODY ;

ID : [a-zA-Z_] [a-zA-Z0-9_]* ;

WS : [ \t\r\n\f\u000B]+ -> skip ;
LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;

// Anything else becomes a token the parser rejects with a readable message.
INVALID_CHAR : . ;

fragment DIGIT : [0-9] ;
fragment HEX_DIGIT : [0-9a-fA-F] ;
fragment EXPONENT : [eE] [+-]? DIGIT+ ;
fragment ESCAPE : '\\' ( [ntvbrfa\\?'"] | [0-7] [0-7]? [0-7]? | 'x' HEX_DIGIT HEX_DIGIT? | 'u' HEX_DIGIT HEX_DIGIT? HEX_DIGIT? HEX_DIGIT? ) ;
fragment CHAR_BODY : '\'' ( ESCAPE | ~['\\\r\n] ) '\'' ;
fragment STRING_BODY : '"' ( ESCAPE | ~["\\\r\n] )* '"' ;
