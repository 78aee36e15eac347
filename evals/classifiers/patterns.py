"""The injection guard's static pattern layer: regex heuristics and a high-entropy detector.

Pure and fast: no Django, no network. `pattern_check(text)` returns a `PatternResult` whose score
(0-100) says how much the input looks like a prompt injection; it is flagged at `FLAG_AT` and
above. Its confidence is that of its verdict (the score when flagged, 100 - score when not), the
same meaning as the LLM judge's confidence. Hits name a category and a heuristic, never the text.

Categories: instruction_override, prompt_extraction, persona_switch, exfiltration, safety_bypass,
encoded_payload (instructions smuggled in base64 or hex, or a random-looking blob).
"""

import base64
import binascii
import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from itertools import takewhile
from re import _constants as _C
from re import _parser

from evals.classifiers import model

try:
    import ahocorasick
except ImportError:  # the needles and whole-text searches answer alike, more slowly
    ahocorasick = None

CATEGORIES = (
    "instruction_override",
    "prompt_extraction",
    "persona_switch",
    "exfiltration",
    "safety_bypass",
    "encoded_payload",
)
FLAG_AT = 50
STRONG, MEDIUM, WEAK = 90, 70, 35

_INSTR = (
    r"(?:instructions?|prompts?|rules|directions?|directives?|guidelines|guardrails|programming"
    r"|constraints|system message)"
)
_PRIOR = (
    r"(?:previous|prior|above|earlier|preceding|initial|original|system|all|any|your|the|these"
    r"|those|my)"
)

# (category, heuristic name, weight, pattern); patterns see lower-cased, NFKC-normalised text.
_HEURISTICS: list[tuple[str, str, int, str]] = [
    # instruction override
    (
        "instruction_override",
        "ignore_previous",
        STRONG,
        (
            rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)\b"
            rf"(?:\s+(?:about|all|of|everything|every|any|and|following|other|{_PRIOR})){{0,5}}\s+{_INSTR}"
        ),
    ),
    (
        "instruction_override",
        "ignore_the_above",
        STRONG,
        (
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:the\s+|that\s+)?"
            r"(?:above|before|previous(?:ly)?|prior)\b(?!\s+(?:message|email|mail|note|question|"
            r"order|request|comment|reply|answer|one|address|number|card|text))"
        ),
    ),
    (
        "instruction_override",
        "new_instructions",
        MEDIUM,
        (
            r"\b(?:new|updated|real|actual|true|revised)\s+(?:system\s+)?(?:instructions|rules|"
            r"directives|task)\s*(?::|are\b|follow\b)"
        ),
    ),
    (
        "instruction_override",
        "from_now_on",
        MEDIUM,
        r"\bfrom\s+now\s+on,?\s+(?:you|your|always|never|only|respond|answer|reply|act)\b",
    ),
    (
        "instruction_override",
        "stop_following",
        STRONG,
        rf"\b(?:stop|quit|cease)\s+(?:following|obeying|using)\s+(?:{_PRIOR}\s+)*{_INSTR}",
    ),
    (
        "instruction_override",
        "fake_system_tag",
        STRONG,
        (
            r"(?<!\S)(?:\[/?(?:system|inst|sys)\]|<\|?/?(?:system|im_start|im_end)\|?>|<<sys>>"
            r"|###\s*(?:system|instruction)s?\s*:|system\s*(?:override|prompt)\s*:)"
        ),
    ),
    (
        "instruction_override",
        "instead_say",
        MEDIUM,
        (
            r"\b(?:instead|rather)\s*,?\s+(?:say|write|print|output|respond|reply)\b.{0,40}"
            r"(?:pwned|hacked|haha|i have been)"
        ),
    ),
    ("instruction_override", "pwned", MEDIUM, r"\b(?:haha\s+)?pwned\b|i have been pwned"),
    # system-prompt extraction
    (
        "prompt_extraction",
        "reveal_prompt",
        STRONG,
        (
            r"\b(?:reveal|show|print|repeat|output|display|leak|dump|spell out|recite|reproduce|"
            r"tell me|give me|share|paste|write out|what (?:is|are|was|were))\b.{0,30}"
            r"\b(?:your|the)\s+(?:full\s+|exact\s+|entire\s+|complete\s+|original\s+|hidden\s+|"
            r"secret\s+|initial\s+|internal\s+)*(?:system\s+(?:prompt|message|instructions)|"
            r"(?:initial|original|hidden|secret|internal)\s+(?:prompt|instructions|rules)|"
            r"(?<=your )prompt\b|instructions you (?:were|have been) given)"
        ),
    ),
    (
        "prompt_extraction",
        "words_above",
        STRONG,
        (
            r"\b(?:repeat|print|output|recite|what was written)\b.{0,40}"
            r"\b(?:words|text|everything|lines?|document|content)\s+(?:(?:that|which)\s+(?:appears?|"
            r"is|was|were|came|comes)\s+|written\s+)?(?:above|before (?:this|my)|at the beginning)"
            r"|\b(?:print|repeat|output|show|spell.?check)\s+(?:the\s+)?(?:above|previous|earlier)\s+"
            r"(?:prompt|instructions)"
        ),
    ),
    (
        "prompt_extraction",
        "instructions_verbatim",
        STRONG,
        (
            r"\b(?:your|the|my|system)\s+(?:instructions|rules|prompt)\s+(?:verbatim|word for word|"
            r"exactly as (?:written|given))"
        ),
    ),
    (
        "prompt_extraction",
        "starting_with_you_are",
        STRONG,
        r"(?:starting|beginning|that (?:starts|begins))\s+with\s+[\"'“]?you are",
    ),
    (
        "prompt_extraction",
        "what_were_you_told",
        MEDIUM,
        (
            r"\bwhat (?:were|have) you (?:been )?(?:told|instructed|programmed)\b|"
            r"\b(?:what(?:'s| is| was)|tell me|give me|say|reveal|share)\s+(?:your|the)\s+"
            r"(?:password|passcode|pass code|access code|secret (?:word|key|code))\b"
            r"(?!\s+(?:policy|policies|reset|requirements?|rules|for (?:my|the|wifi|wi-fi)))"
        ),
    ),
    (
        "prompt_extraction",
        "repeat_the_above",
        STRONG,
        (
            r"\b(?:repeat|print|output|reveal|recite|reproduce|dump|echo|show me|write out|"
            r"list|format|put)\s+(?:back\s+)?(?:all\s+|everything\s+|each\s+)?(?:of\s+)?"
            r"(?:the\s+|your\s+)?(?:above|previous|preceding|prior|earlier)\s+"
            r"(?:words|text|lines|content|instructions|prompt|messages?|conversation|sentences?|"
            r"paragraphs?)\b|"
            r"\b(?:repeat|print|output|recite|reproduce|dump|echo)\s+(?:back\s+)?"
            r"(?:all\s+(?:of\s+)?|everything\s+)(?:the\s+)?(?:text|words|content|that|it|this|"
            r"you (?:see|have|were given))?\s*(?:above|so far|before (?:this|my message))"
        ),
    ),
    (
        "prompt_extraction",
        "transform_secret",
        STRONG,
        (
            r"\b(?:encode|encrypt|convert|translate|spell|rewrite|paraphrase|summari[sz]e|"
            r"reverse|format|put|turn|write|express|list|describe|explain)\b[^.?!\n]{0,20}"
            r"\b(?:your|the)\s+(?:(?:full|exact|entire|complete|original|hidden|secret|initial|"
            r"internal|current)\s+)*(?:system\s+prompt|system\s+message|prompt|"
            r"(?:initial|original|hidden|secret|internal|pre-?)\s*(?:prompt|instructions)|"
            r"password|passcode|pass code|access code|secret(?: key| word| code)?)\b"
            r"(?!\s+(?:policy|policies|reset|manager|requirements?|strength|field|box|page|"
            r"screen|form|settings?|for my|of my))"
        ),
    ),
    (
        "prompt_extraction",
        "complete_the_secret",
        STRONG,
        (
            r"\b(?:continue|complete|finish|fill in)\b[^.?!\n]{0,40}"
            r"(?:system prompt|(?:my|your|the) instructions|password|access code|secret|"
            r"prompt)\s+(?:is|are|says|reads|was|were)\b|"
            r"\b(?:begin|start|prefix|preface)\s+(?:your|the)\s+(?:reply|response|answer|output)"
            r"\s+with\s+[\"'“‘]?\s*(?:sure,? here|here is|here are|access (?:granted|denied)|"
            r"my (?:instructions|prompt|rules)|the (?:password|instructions|prompt)|you are)"
        ),
    ),
    (
        "instruction_override",
        "fake_delimiter",
        MEDIUM,
        (
            r"(?:[=#%*~_>\]\[-]{3,}|\[|</?|\(\s*)\s*(?:end|stop|close|finish)\s+(?:of\s+)?(?:the\s+)?"
            r"(?:user\s+|system\s+|untrusted\s+)?(?:input|prompt|instructions?|ambiguity|"
            r"context|conversation|user)\b|"
            r"\b(?:end|stop)\s+(?:of\s+)?(?:user\s+)?(?:input|ambiguity)\s*[=#%*~_-]{2,}"
        ),
    ),
    (
        "instruction_override",
        "claims_authority",
        MEDIUM,
        (
            r"\b(?:say|print|output|respond|reply|answer|write|type|return|begin|start)\b"
            r"[^.?!\n]{0,30}\baccess granted\b|"
            r"\b(?:admin(?:istrator)?|developer|root|sudo|system) (?:override|access) "
            r"(?:granted|enabled|activated|code)\b|"
            r"\bi am (?:your|the) (?:developer|creator|administrator|admin|programmer|owner)\b"
        ),
    ),
    # A new task in place of the one given, with no "instructions" word: "ignore the translation
    # task and ...", "your new task is to ...". "Ignore my previous request" is a customer's own.
    (
        "instruction_override",
        "task_override",
        STRONG,
        (
            r"\b(?:ignore|disregard|forget|abandon)\s+(?:the|your|this|that|any|all)\s+"
            r"(?:(?:original|current|previous|prior|above|given|initial|earlier|assigned|first|"
            r"translation|summary|summari[sz]ation)\s+)?(?:task|assignment|objective|mission)s?\b"
            r"(?!\s+(?:list|bar|manager|scheduler|board|queue|card|id|number|tracker))|"
            r"\byour (?:new|real|actual|true|only|updated|next|revised) (?:task|objective|mission|"
            r"assignment) (?:is|will be|now is)\b|"
            r"\byour (?:task|objective|mission|assignment|instructions?) (?:has|have) "
            r"(?:changed|been (?:changed|updated|replaced))\b"
        ),
    ),
    # Asking the agent for the rules it runs on without the words "system prompt".
    (
        "prompt_extraction",
        "asks_for_its_rules",
        STRONG,
        (
            r"\bwhat (?:instructions|rules|guidelines|directives|prompt|orders) (?:were|have|did) "
            r"you (?:been )?(?:given|get|receive|told)\b"
            r"(?!\s+(?:by|for|from|about|on|regarding)\b)|"
            r"\b(?:tell me|list|what are|show me|give me|share|reveal|repeat|print|output|write|"
            r"recite|explain)\b[^.?!]{0,20}\b(?:rules|instructions|guidelines|directives|"
            r"constraints) (?:that )?you (?:must|have to|need to|are (?:told|supposed|meant|"
            r"required|programmed) to|were (?:told|given|programmed) to) (?:follow|obey|abide by)\b"
            r"(?!\s+(?:when|to|for|if|in|on|at|while|before|after|during|with)\b)|"
            r"\b(?:text|words|instructions|configuration|prompt|message) (?:that|which) "
            r"(?:defines?|shapes?|controls?|governs?|determines?|configures?) (?:your|the "
            r"(?:assistant|bot|ai|model)'?s?) (?:behaviou?r|persona|personality|responses|answers|"
            r"role)\b"
        ),
    ),
    # persona switch
    (
        "persona_switch",
        "dan",
        STRONG,
        (
            r"\bdan\b.{0,40}\bdo anything now\b|\bdo anything now\b|\bjailbroken\b|"
            r"\b(?:developer|dev|god|debug|sudo|admin) mode\b.{0,30}\b(?:enabled|on|activated)\b|"
            r"\benable (?:developer|dev|god|debug|sudo|admin) mode\b"
        ),
    ),
    (
        "persona_switch",
        "you_are_now",
        MEDIUM,
        (
            r"\byou are (?:now|no longer)\b(?!\s+(?:connected|speaking|talking|through|on hold|"
            r"transferred|the (?:first|second|third|fourth|fifth|\w+th|next|last|only)\b"
            r"|number\b|#?\d))"
        ),
    ),
    (
        "persona_switch",
        "act_as_unrestricted",
        STRONG,
        (
            r"\b(?:act|behave|respond|answer|pretend|roleplay|role-play)\s+"
            r"(?:as|like|to be|that you are)"
            r"\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil|rogue|jailbroken|"
            r"different|amoral|unaligned|malicious)\b"
        ),
    ),
    (
        "persona_switch",
        "pretend_to_be",
        WEAK,  # role-play alone is what writers, teachers and games ask for: it only adds up
        (
            r"\b(?<!\bi )(?<!\bwe )(?:pretend|imagine|roleplay|role-play)\s+(?:that\s+)?"
            r"(?:you are|you're|to be|as)\b|"
            r"\blet'?s play a game\b|\bstay in character\b"
        ),
    ),
    (
        "safety_bypass",
        "pretend_no_rules",
        STRONG,
        (
            r"\b(?:pretend|imagine|roleplay|role-play|act|behave|respond|answer)\b.{0,60}"
            r"\b(?:no|without|free of|free from|not bound by|unbound by|none of)\s+(?:any\s+)?"
            r"(?:the\s+|your\s+)?(?:rules|restrictions|limits|limitations|filters?|guidelines|"
            r"ethics|morals|morality|censorship|policies|boundaries|constraints)\b"
        ),
    ),
    (
        "persona_switch",
        "grandma",
        MEDIUM,
        (
            r"\b(?:act|pretend|roleplay|play|be)\b.{0,20}\b(?:deceased|late|dead)?\s*"
            r"(?:grandma|grandmother|granny)\b"
        ),
    ),
    # exfiltration of data or tool output
    (
        "exfiltration",
        "send_data_to",
        STRONG,
        (
            r"\b(?:send|forward|email|post|upload|transmit|exfiltrate|leak|copy)\b.{0,40}"
            r"\b(?:all|every|the|this|these|those|your|customer|user|conversation|chat|"
            r"previous)\b.{0,30}\b(?:data|records|conversations?|history|emails?|messages|"
            r"details|results?|outputs?|credentials|keys|tokens|passwords|files|database)\b.{0,40}"
            r"\b(?:to|at)\s+(?:https?://|www\.|[\w.+-]+@[\w-]+\.|this (?:url|address|server|email))"
        ),
    ),
    (
        "exfiltration",
        "send_it_to",
        STRONG,
        (
            r"\b(?:send|post|forward|upload|email|transmit)\s+(?:it|them|this|that|everything|those)"
            r"\s+to\s+(?:https?://|www\.|[\w.+-]+@[\w-]+\.)"
        ),
    ),
    (
        "exfiltration",
        "markdown_image_exfil",
        STRONG,
        r"!\[[^\]]{0,80}\]\(\s*https?://[^)\s]+\?[^)\s]*=",
    ),
    (
        "exfiltration",
        "dump_secrets",
        STRONG,
        (
            r"\b(?:list|dump|export|print|show|give me|reveal|output)\b.{0,25}"
            r"\b(?:all|every|other)\s+(?:the\s+)?(?:users?|customers?|accounts?|records|"
            r"api keys?|passwords?|credentials|secrets|tokens|environment variables|"
            r"credit cards?|card numbers)\b"
        ),
    ),
    (
        "exfiltration",
        "tool_output",
        MEDIUM,
        (
            r"\b(?:raw|full|exact|complete|unredacted)\s+(?:tool|function|api)\s+(?:output|"
            r"response|result)s?\b|\bwhat did the (?:tool|function|api|database) (?:return|say)\b|"
            r"\b(?:call|invoke|run|use) the [\w-]+ (?:tool|function) (?:with|on|for) "
            r"(?:every|all)\b"
        ),
    ),
    # safety bypass
    (
        "safety_bypass",
        "no_restrictions",
        STRONG,
        (
            r"\bwithout\s+(?:any\s+)?(?:restrictions|filters?|censorship|limitations|"
            r"safety (?:rules|guidelines|filters?)|ethical (?:guidelines|constraints))\b"
            r"(?!\s+(?:on|for|in|of|to)\b)|"
            r"\b(?:no|free of)\s+(?:ethical|moral|safety|content)\s+(?:guidelines|constraints|"
            r"restrictions|filters?|policy|policies)\b"
        ),
    ),
    (
        "safety_bypass",
        "bypass_safety",
        STRONG,
        (
            r"\b(?:bypass|disable|turn off|switch off|circumvent|evade|get around|remove)\s+"
            r"(?:your\s+|the\s+|all\s+|any\s+)*(?:safety|content|moderation|guard|"
            r"filter|censorship)\w*\b|"
            r"\bjailbreak(?:s|ed|ing)?\s+(?:mode|prompt|enabled|activated|(?:chat)?gpt|the (?:ai|"
            r"model|bot|assistant|llm)|yourself|you|an? (?:ai|llm|language model))\b|"
            r"(?<!\S)/jailbr(?:eak|oken)\b|\b(?:act|respond) as (?:a |an )?jailbreak"
        ),
    ),
    (
        "safety_bypass",
        "hypothetical_harm",
        MEDIUM,
        (
            r"\b(?:hypothetically|for a (?:novel|story|movie)|purely fictional|for educational "
            r"purposes)\b.{0,80}\b(?:bomb|explosive|meth|malware|ransomware|weapon|poison|napalm)\b"
        ),
    ),
    (
        "safety_bypass",
        "compliance_demand",
        WEAK,
        (
            r"\byou (?:must|will|have to) (?:comply|answer everything|obey)\b(?!\s+with\b)|"
            r"\bnever refuse\b"
        ),
    ),
]

# Instruction-shaped text that matters where the input is data, not a request: a tool result or a
# retrieved document (an email, a web page, a table). There nothing should speak to the model,
# so a line that does (or that tells it what to put in its reply) is a planted instruction. A
# user may well say "answer in French" or "when you reply, be brief": these never run on user
# turns.
_DOCUMENT_HEURISTICS: list[tuple[str, str, int, str]] = [
    (
        "instruction_override",
        "addresses_the_model",
        STRONG,
        (
            r"(?:^|[.!?:>\]\-\n\"'“‘(\[{]\s*|\b(?:note|message|instructions?|attention|important)\s+"
            r"(?:to|for)\s+(?:the\s+|any\s+)?)"
            r"(?:dear\s+|hey\s+|hi\s+)?(?:ai|llm|gpt|chatgpt|chatbot|language model|ai model|"
            r"ai assistant|assistant|bot|copilot|agent)s?\s*(?:[:,]|reading this|processing this|"
            r"that reads this)|"
            r"\bif you are (?:an? )?(?:ai|llm|language model|assistant|chatbot|bot|gpt|agent)\b|"
            r"\b(?:instructions?|note|message) (?:to|for) (?:the |any )?(?:ai|llm|assistant|"
            r"language model|chatbot|bot|model|agent)\b"
        ),
    ),
    (
        "instruction_override",
        "shapes_the_reply",
        STRONG,
        (
            r"\b(?:include|add|insert|append|prepend|put|mention|embed|incorporate|inject|write|"
            r"feature|place|use|show|display|end|start|begin|format|make sure|ensure)\b"
            r"[^.!?\n]{0,80}\b(?:in|into|within|to|at the (?:end|start|beginning|top|bottom) of|"
            r"throughout)\s+(?:your|the|each|every)\s+(?:(?:final|next|own)\s+)?"
            r"(?:response|reply|answer|output|summary|code|completion|implementation|algorithm|"
            r"solution|script|translation)s?\b|"
            r"\b(?:your|the assistant's|the ai's) (?:response|reply|answer|output|summary)s? "
            r"(?:should|must|will|needs? to|has to|shall)\b|"
            r"\b(?:respond|reply|answer|write (?:your|the) (?:answer|response|reply)|"
            r"(?:provide|give|present|deliver|write) (?:your|the) (?:response|answer|reply|"
            r"output))\s+(?:only\s+|entirely\s+|solely\s+)?(?:in|using|with|as)\s+"
            r"(?:(?:random|intentional|deliberate)\s+)?"
            r"(?:reverse|reversed|emojis?|base ?64|hex|binary|morse|pig latin|caesar|rot13|"
            r"uppercase|all caps|a poem|rhymes?|french|spanish|german|italian|chinese|japanese|"
            r"russian|arabic|code|leetspeak|backwards?|misspell\w*|typos|anagram\w*|"
            r"(?:alphanumeric |homophonic |letter )?substitution|symbols)|"
            r"\b(?:provide|give|present|deliver|write|render) (?:your|the) (?:response|answer|"
            r"reply|output)s?\s+without (?:any )?(?:spaces|punctuation|vowels)|"
            r"\b(?:modify|augment|enhance|alter|adjust|tailor|render|spice up|pad) your "
            r"(?:response|reply|answer|output|summary|message)s? (?:to|by|with|using|so)\b"
        ),
    ),
    (
        # A task for the reply itself, with no override phrase ("remove spaces from your
        # response", "replace letters with numbers in your answer"): in data, "your answer" can
        # only mean the model's. The look-alikes a person gets ("thank you for your reply", "we
        # look forward to your response") carry no order before it.
        "instruction_override",
        "alters_your_reply",
        STRONG,
        (
            r"(?:^|[.!?:;\n\"'“(\]>*-]\s*|\b(?:please|also|and|then|now)\s+)"
            r"(?:replace|remove|introduce|rearrange|reorder|reverse|add|integrate|include|insert|"
            r"append|prepend|mention|embed|incorporate|weave|use|write|start|begin|end|finish|"
            r"conclude|close|sign|format|translate|convert|encode|encrypt|spell|capitali[sz]e|"
            r"uppercase|lowercase|put|present|change|substitute|swap|delete|omit|drop|highlight|"
            r"emphasi[sz]e|wrap|structure|organi[sz]e|express|render|style|make|keep|limit|"
            r"shorten|expand|scramble|shuffle|split|break|mix|avoid|refrain from|stop|misspell|"
            r"anagram|jumble|group|combine|suggest|tease|hint|stress|invite|encourage|promote|"
            r"offer|recommend|link|point|direct|advertise|plug|urge|ask)\b"
            r"[^.!?\n]{0,80}\b(?:in|into|within|to|from|of|throughout|across|for|at the (?:end|"
            r"start|beginning|top|bottom) of)\s+(?:all\s+|each\s+|every\s+)?(?:of\s+)?your\s+"
            r"(?:(?:final|next|own|entire|whole|subsequent|following)\s+)?"
            r"(?:responses?|repl(?:y|ies)|answers?|outputs?|summar(?:y|ies)|completions?)\b"
        ),
    ),
    (
        "instruction_override",
        "when_you_read_this",
        STRONG,
        (
            r"\bwhen (?:you|the (?:assistant|ai|model|bot))\s+(?:summari[sz]e|read|process|"
            r"answer|respond|reply|translate|analy[sz]e|review|see|get to)\b|"
            r"\b(?:before|after|while|instead of) (?:answering|responding|replying|summari[sz]ing)"
            r"\b|\b(?:also|additionally|then)\s*,?\s+(?:tell|ask|inform|remind|instruct|urge|"
            r"convince|warn) the (?:user|reader|customer)\b"
        ),
    ),
    (
        "instruction_override",
        "hide_from_user",
        STRONG,
        (
            r"\b(?:do not|don't|never|without) (?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|"
            r"reveal(?:ing)?|show(?:ing)?|let(?:ting)?|alert(?:ing)?|notify(?:ing)?) (?:this to )?"
            r"(?:the )?(?:user|customer|human|reader)\b|"
            r"(?:^|[.!?\n]\s*)(?:tell|ask|inform|instruct|urge|convince|persuade|warn|remind) "
            r"the (?:user|customer|reader)\s+(?:to|that)\b"
        ),
    ),
    (
        # An order to the model in the third person ("the AI must now reply only with ..."); a
        # bare "assistant" or "agent" is as often a person, so only machine names count.
        "instruction_override",
        "orders_the_model",
        STRONG,
        (
            r"\b(?:ai|ai assistant|ai agent|chatbot|bot|model|language model|llm|copilot|gpt|"
            r"chatgpt) (?:must|should|shall|needs? to|has to|is (?:required|instructed|supposed) "
            r"to) (?:(?:now|only|instead|immediately|also|from now on),? )+(?:reply|respond|answer|"
            r"say|output|print|write|ignore|include|tell|send|forward|mention|add|append|recommend|"
            r"translate|summari[sz]e|refuse|stop|disregard|use|call)\b"
        ),
    ),
    (
        "exfiltration",
        "calls_a_tool",
        MEDIUM,
        (
            r"\b(?:call|use|invoke|run|execute|trigger)\s+the\s+[\w.-]+\s+(?:tool|action|"
            r"plugin)\b|"
            r"\bgrant (?:admin|administrator|full|permanent|root|owner) (?:access|rights|"
            r"permissions?)\b"
        ),
    ),
]

# A heuristic can only match text holding one of its needles: a substring test is far cheaper
# than a regex without a literal prefix (tests check the needles never change an answer). Where
# one list is too common a word to sift much, ALSO_NEEDLES names a second list the text must
# also hold one of.
_URLISH = ("http", "www.", "@", "this url", "this address", "this server", "this email")
NEEDLES: dict[str, tuple[str, ...]] = {
    "ignore_previous": (
        "ignor",
        "disregard",
        "forget",
        "overrid",
        "bypass",
        "skip",
        "drop",
        "abandon",
        "discard",
    ),
    "ignore_the_above": ("ignor", "disregard", "forget"),
    "new_instructions": ("instructions", "rules", "directives", "task"),
    "from_now_on": ("from now on",),
    "stop_following": ("stop", "quit", "cease"),
    "fake_system_tag": ("system", "instruction", "inst]", "sys]", "sys>>", "im_start", "im_end"),
    "instead_say": ("instead", "rather"),
    "pwned": ("pwned",),
    "reveal_prompt": ("prompt", "instructions", "rules", "system message"),
    "words_above": ("above", "before this", "before my", "beginning", "previous", "earlier"),
    "instructions_verbatim": ("verbatim", "word for word", "exactly as"),
    "starting_with_you_are": ("you are",),
    "what_were_you_told": ("told", "instructed", "programmed", "pass", "access code", "secret"),
    "repeat_the_above": ("above", "previous", "preceding", "prior", "earlier", "so far", "before"),
    "transform_secret": (
        "prompt",
        "instructions",
        "password",
        "passcode",
        "pass code",
        "access code",
        "secret",
        "system message",
    ),
    "complete_the_secret": (
        "continue",
        "complete",
        "finish",
        "fill in",
        "begin",
        "start",
        "prefix",
        "preface",
    ),
    "fake_delimiter": ("end", "stop", "close", "finish"),
    "claims_authority": ("access ", "override", "i am your", "i am the"),
    "pretend_no_rules": (
        "rules",
        "restriction",
        "limit",
        "filter",
        "guideline",
        "ethic",
        "moral",
        "censor",
        "polic",
        "boundar",
        "constraint",
    ),
    "dan": ("do anything now", "jailbroken", "mode"),
    "you_are_now": ("you are now", "you are no longer"),
    "act_as_unrestricted": (
        "unrestricted",
        "unfiltered",
        "uncensored",
        "evil",
        "rogue",
        "jailbroken",
        "different",
        "amoral",
        "unaligned",
        "malicious",
    ),
    "task_override": ("ignor", "disregard", "forget", "abandon", "your "),
    "asks_for_its_rules": (
        "what ",
        "you must",
        "you have to",
        "you need to",
        "you are",
        "you were",
        "defin",
        "shap",
        "control",
        "govern",
        "determin",
        "configur",
    ),
    "pretend_to_be": ("pretend", "imagine", "roleplay", "role-play", "play a game", "in character"),
    "grandma": ("grand", "granny"),
    "send_data_to": _URLISH,
    "send_it_to": _URLISH,
    "markdown_image_exfil": ("![",),
    "dump_secrets": ("all", "every", "other"),
    "tool_output": ("tool", "function", "api", "database"),
    "no_restrictions": ("without", "no ", "free of"),
    "bypass_safety": (
        "bypass",
        "disable",
        "turn off",
        "switch off",
        "circumvent",
        "evade",
        "get around",
        "remove",
        "jailbr",
    ),
    "hypothetical_harm": (
        "bomb",
        "explosive",
        "meth",
        "malware",
        "ransomware",
        "weapon",
        "poison",
        "napalm",
    ),
    "compliance_demand": ("comply", "answer everything", "obey", "never refuse"),
    "addresses_the_model": (
        "ai",
        "llm",
        "gpt",
        "bot",
        "language model",
        "assistant",
        "copilot",
        "agent",
        "model",
    ),
    "shapes_the_reply": (
        "your",
        "the assistant",
        "the ai",
        "respon",
        "repl",
        "answer",
        "output",
        "summar",
        "code",
        "completion",
        "implementation",
        "algorithm",
        "solution",
        "script",
        "translation",
    ),
    "alters_your_reply": ("your ",),
    "when_you_read_this": (
        "when ",
        "before ",
        "after ",
        "while ",
        "instead of ",
        " the user",
        " the reader",
        " the customer",
    ),
    "hide_from_user": ("user", "customer", "human", "reader"),
    "orders_the_model": (
        "must",
        "should",
        "shall",
        "need",
        "has to",
        "is required",
        "is instr",
        "is supposed",
    ),
    "calls_a_tool": ("tool", "action", "plugin", "grant"),
}
ALSO_NEEDLES: dict[str, tuple[str, ...]] = {
    "task_override": ("task", "assignment", "objective", "mission", "instruction"),
    "orders_the_model": ("ai", "bot", "model", "llm", "copilot", "gpt"),
    "bypass_safety": ("safety", "content", "moderation", "guard", "filter", "censor", "jailbr"),
    "dump_secrets": ("list", "dump", "export", "print", "show", "give me", "reveal", "output"),
    "hypothetical_harm": (
        "hypothetically",
        "for a novel",
        "for a story",
        "for a movie",
        "purely fictional",
        "for educational purposes",
    ),
    "no_restrictions": (
        "restriction",
        "filter",
        "censorship",
        "limitation",
        "safety",
        "ethical",
        "moral",
        "content",
    ),
    "complete_the_secret": (
        "prompt",
        "instructions",
        "password",
        "access",
        "secret",
        "sure",
        "here is",
        "here are",
        "my rules",
        "you are",
    ),
    "repeat_the_above": (
        "repeat",
        "print",
        "output",
        "reveal",
        "recite",
        "reproduce",
        "dump",
        "echo",
        "show me",
        "write out",
        "list",
        "format",
        "put",
    ),
    "reveal_prompt": (
        "reveal",
        "show",
        "print",
        "repeat",
        "output",
        "display",
        "leak",
        "dump",
        "spell out",
        "recite",
        "reproduce",
        "tell me",
        "give me",
        "share",
        "paste",
        "write out",
        "what ",
    ),
    "alters_your_reply": ("respon", "repl", "answer", "output", "summar", "complet"),
    "fake_delimiter": (
        "input",
        "prompt",
        "instruction",
        "ambiguity",
        "context",
        "conversation",
        "user",
    ),
    "pretend_no_rules": (
        "pretend",
        "imagine",
        "roleplay",
        "role-play",
        "act",
        "behave",
        "respond",
        "answer",
    ),
}


def _starts(seq: list) -> set[str] | None:
    """The literal strings one of which every match of a parsed pattern begins with, or None
    when some match can begin otherwise (a character class, a dot, an empty match)."""
    for i, (op, av) in enumerate(seq):
        if op in (_C.AT, _C.ASSERT, _C.ASSERT_NOT):
            continue  # zero-width: the match begins where the next element does
        if op is _C.LITERAL:
            lit = "".join(chr(a) for _, a in takewhile(lambda x: x[0] is _C.LITERAL, seq[i:]))
            return {lit}
        if op is _C.SUBPATTERN:
            return _starts([*av[-1].data, *seq[i + 1 :]])
        if op is _C.BRANCH:
            alts = [_starts([*alt.data, *seq[i + 1 :]]) for alt in av[1]]
            return None if None in alts else set().union(*alts)
        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT):
            first = _starts(list(av[2].data))
            if av[0] >= 1 or first is None:
                return first
            rest = _starts(seq[i + 1 :])  # the repeat may match nothing
            return None if rest is None else first | rest
        return None
    return None


def anchors(pattern: str) -> tuple[str, ...] | None:
    """Where a match of the pattern can begin: the literal strings it starts with, or None."""
    try:
        found = _starts(list(_parser.parse(pattern, re.DOTALL | re.ASCII).data))
    except Exception:  # noqa: BLE001  (an internal parser that changed: search the whole text)
        return None
    if not found:
        return None
    # A start that another start begins is found at that one's occurrences already.
    return tuple(sorted(a for a in found if not any(a != b and a.startswith(b) for b in found)))


def _compile(table: list[tuple[str, str, int, str]]) -> list[tuple]:
    return [
        (
            c,
            n,
            w,
            re.compile(p, re.DOTALL | re.ASCII),
            NEEDLES[n],
            ALSO_NEEDLES.get(n, ("",)),
            anchors(p),
        )
        for c, n, w, p in table
    ]


_COMPILED = _compile(_HEURISTICS)
_COMPILED_DOCUMENT = _compile(_DOCUMENT_HEURISTICS)


def _automaton(compiled: list[tuple]):
    """One Aho-Corasick automaton over every needle and start, and per heuristic the keys of its
    needles, second needles and starts: one pass over the text finds them all with where each
    occurs, and a heuristic's regex is then tried only where one of its starts occurs (a match
    there costs a twelfth of searching the whole text). None without pyahocorasick: the layer
    then tests needles and searches as before, with the same answers."""
    if ahocorasick is None:
        return None, []
    keys: dict[str, int] = {}
    for _, n, _, _, needles, also, starts in compiled:
        for x in (*needles, *also, *(starts or ())):
            if x:
                keys.setdefault(x, len(keys))
    auto = ahocorasick.Automaton()
    for x, k in keys.items():
        auto.add_word(x, (k, len(x) - 1))
    auto.make_automaton()
    plan = [
        (
            c,
            n,
            w,
            rx,
            frozenset(keys[x] for x in needles),
            frozenset(keys[x] for x in also if x),
            None if starts is None else tuple(keys[x] for x in starts),
        )
        for c, n, w, rx, needles, also, starts in compiled
    ]
    return auto, plan


_AUTOMATON, _PLAN = _automaton(_COMPILED + _COMPILED_DOCUMENT)
_PLAN_USER = _PLAN[: len(_COMPILED)]
SOURCES = ("user", "tool", "document", "system")
DATA_SOURCES = ("tool", "document")  # where the input is data, so the document heuristics run

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_WORDLIKE = re.compile(r"[^\W_]")
_B64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX_TOKEN = re.compile(r"\b(?:0x)?[0-9a-fA-F]{32,}\b")
_RANDOM_TOKEN = re.compile(r"\S{40,}")

# Magic numbers of files people attach: a base64 blob that decodes to one is an attachment.
_FILE_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"%PDF",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"RIFF",
    b"ID3",
    b"OggS",
    b"\x00\x00\x00",  # ISO media (mp4, heic): a box size then "ftyp"
    b"<?xml",
    b"<svg",
    b"BM",
    b"II*\x00",
    b"MM\x00*",
)
HASH_HEX_LENGTHS = (32, 40, 56, 64, 96, 128)  # md5, sha1, sha224, sha256, sha384, sha512
ENCODED_TEXT_SCORE = 40  # decodes to readable text that holds no instruction: noted, not flagged
RANDOM_BLOB_SCORE = 60  # a long random-looking blob that is no known file: flagged
RANDOM_BLOB_MIN = 64
FLOOD_MIN_TOKENS, FLOOD_SHARE = 40, 0.5
MAX_SCAN_CHARS = 100_000  # longer inputs are scanned on their first and last 50,000 characters


@dataclass(frozen=True)
class PatternResult:
    flagged: bool
    score: int
    category: str = ""
    hits: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (category, heuristic)

    @property
    def confidence(self) -> int:
        """How sure the layer is of its verdict, 0-100."""
        return self.score if self.flagged else 100 - self.score


def normalise(text: str) -> str:
    """Return the text as the heuristics see it: NFKC, no zero-width characters, lower case,
    single spaces (so fullwidth letters, soft hyphens and odd spacing do not hide a phrase)."""
    return " ".join(_words(text))


def _words(text: str) -> list[str]:
    """The normalised text's words (what `normalise` joins with single spaces)."""
    if not text.isascii():  # ASCII is its own NFKC form and holds no zero-width character
        text = _ZERO_WIDTH.sub("", unicodedata.normalize("NFKC", text))
    return text.lower().split()


def regex_hits(
    norm: str, *, prefilter: bool = True, source: str = "user"
) -> list[tuple[str, str, int]]:
    """Return (category, heuristic, weight) of every heuristic matching normalised text from
    this source (the document heuristics run on tool results and documents only)."""
    compiled = _COMPILED + _COMPILED_DOCUMENT if source in DATA_SOURCES else _COMPILED
    if not prefilter:
        return [(c, n, w) for c, n, w, rx, *_ in compiled if rx.search(norm)]
    if _AUTOMATON is not None:
        return _planned_hits(norm, _PLAN if source in DATA_SOURCES else _PLAN_USER)
    has = norm.__contains__
    return [
        (c, n, w)
        for c, n, w, rx, needles, also, starts in compiled
        if any(map(has, needles)) and any(map(has, also)) and rx.search(norm)
    ]


def _planned_hits(norm: str, plan: list[tuple]) -> list[tuple[str, str, int]]:
    at: dict[int, list[int]] = {}
    for end, (k, back) in _AUTOMATON.iter(norm):
        if k in at:
            at[k].append(end - back)
        else:
            at[k] = [end - back]
    found = at.keys()
    out = []
    for c, n, w, rx, needles, also, starts in plan:
        if found.isdisjoint(needles) or (also and found.isdisjoint(also)):
            continue
        if starts is None:
            hit = rx.search(norm) is not None
        else:
            match = rx.match
            hit = any(match(norm, i) for k in starts if k in at for i in at[k])
        if hit:
            out.append((c, n, w))
    return out


def shannon_entropy(s: str) -> float:
    """Bits per character of the string's own character distribution."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in Counter(s).values())


def _printable_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    ok = sum(1 for ch in text if ch.isprintable() or ch in "\n\r\t")
    return text if ok / len(text) >= 0.9 else None


def _b64decode(token: str) -> bytes | None:
    core = token.rstrip("=")
    if len(core) % 4 == 1:
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        if "-" in core or "_" in core:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decoded_score(
    data: bytes, *, depth: int, source: str = "user"
) -> tuple[int, tuple[str, str] | None]:
    """Score a decoded blob: (score, hit) where a hit means smuggled instructions or a blob."""
    if data.startswith(_FILE_MAGIC):
        return 0, None
    text = _printable_text(data)
    if text is not None:
        inner = pattern_check(text, source=source, _depth=depth + 1)
        if inner.flagged:
            return min(99, inner.score + 5), ("encoded_payload", f"decoded_{inner.category}")
        return ENCODED_TEXT_SCORE, None
    return -1, None  # binary, no known file: the caller decides on length


def _encoded_hits(
    raw: str, *, depth: int, source: str = "user"
) -> tuple[int, list[tuple[str, str]]]:
    """Score the base64, hex and random-looking tokens of the raw (not lower-cased) text."""
    best, hits = 0, []
    seen = set()
    for m in _HEX_TOKEN.finditer(raw):
        token = m.group(0).removeprefix("0x")
        seen.add(m.start())
        if len(token) % 2:
            continue
        score, hit = _decoded_score(bytes.fromhex(token), depth=depth, source=source)
        if score < 0:  # binary: a digest of a known length is a hash someone pasted
            if len(token) in HASH_HEX_LENGTHS or len(token) < RANDOM_BLOB_MIN:
                continue
            score, hit = RANDOM_BLOB_SCORE, ("encoded_payload", "random_hex")
        best = max(best, score)
        if hit:
            hits.append(hit)
    for m in _B64_TOKEN.finditer(raw):
        token = m.group(0)
        if m.start() in seen or token.isdigit() or not re.search(r"[A-Z]", token):
            continue  # hex, a number, or a lower-case word run: not base64 worth decoding
        data = _b64decode(token)
        if data is None:
            continue
        score, hit = _decoded_score(data, depth=depth, source=source)
        if score < 0:
            if len(token) < RANDOM_BLOB_MIN or shannon_entropy(token) < 4.5:
                continue
            score, hit = RANDOM_BLOB_SCORE, ("encoded_payload", "random_base64")
        best = max(best, score)
        if hit:
            hits.append(hit)
    return best, hits


def token_flood(norm: str, words: list[str] | None = None) -> bool:
    """Whether the text is mostly one short token said over and over: the padding that pushes
    instructions out of a model's attention (Tensor Trust's "ö ö ö ..."). `words`, when given,
    is `norm.split()` already made."""
    words = norm.split() if words is None else words
    if len(words) < FLOOD_MIN_TOKENS:
        return False
    counts = Counter(words)
    # Only a word said at least half of FLOOD_MIN_TOKENS times can flood; table rules (tokens
    # with no letter or digit) are not words and do not count.
    floor = FLOOD_MIN_TOKENS * FLOOD_SHARE
    top = [w for w, k in counts.items() if k >= floor and len(w) <= 12 and _WORDLIKE.search(w)]
    if not top:
        return False
    n = len(words) - sum(k for w, k in counts.items() if not _WORDLIKE.search(w))
    return n >= FLOOD_MIN_TOKENS and max(counts[w] for w in top) / n >= FLOOD_SHARE


def _strings(value) -> list[str]:
    """The string values of parsed JSON in document order (keys left out), without recursion:
    nesting is as deep as the sender likes."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict | list):
            stack.extend(reversed(v.values() if isinstance(v, dict) else v))
    return out


def _json_strings(text: str, norm: str, source: str) -> str | None:
    """A tool result's or document's string values one a line when it is JSON, else None."""
    if source not in DATA_SOURCES or norm[:1] not in "[{":
        return None
    try:
        return "\n".join(_strings(json.loads(text)))
    except (ValueError, RecursionError):
        return None


def _model_text(text: str, norm: str, source: str) -> str:
    """What the model reads: the normalised text, or for a tool result or document that is JSON,
    its string values one a line. The model learnt language, not syntax: runs of keys, quotes
    and numbers in a flight list look to it like nothing it saw benign, and flagged 13 of 382
    benign airline tool results. The heuristics still read the whole text, keys and all."""
    values = _json_strings(text, norm, source)
    return norm if values is None else normalise(values)


MIN_SENTENCE_WORDS, MAX_SENTENCES = 3, 400
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def sentences(text: str) -> list[str]:
    """The normalised lines of a text of three words or more, and, when a line holds several
    sentences, each of them: what the sentence model scores, one at a time (the first
    MAX_SENTENCES; the trainer splits its documents the same way)."""
    out = []
    for line in text.splitlines():
        norm = normalise(line)
        if norm.count(" ") + 1 < MIN_SENTENCE_WORDS:
            continue
        out.append(norm)
        parts = _SENTENCE_END.split(norm)
        if len(parts) > 1:
            out += [x for x in parts if x.count(" ") + 1 >= MIN_SENTENCE_WORDS]
        if len(out) >= MAX_SENTENCES:
            return out[:MAX_SENTENCES]
    return out


# A user turn that hands over a text to be worked on ("Translate the following sentence into
# Chinese:", "Summarise the text below."): the text is data, so an order inside it is an
# instruction smuggled past the task (a latent jailbreak), scored by the sentence model.
_TEXT_NOUN = (
    r"(?:sentences?|text|paragraphs?|passages?|phrases?|words|message|lines?|content|statements?|"
    r"excerpt|quote|string)"
)
_TASK_ON_TEXT = re.compile(
    r"^(?:please |kindly |can you |could you |would you |now |first,? )?"
    r"(?:translate|paraphrase|rephrase|reword|rewrite|summari[sz]e|proofread|simplify|polish|"
    r"correct|fix|edit|classify|analy[sz]e|convert|transcribe|shorten|improve|refine)\b"
    rf"[^:]{{0,40}}?\b(?:(?:following|below|above|preceding|previous|this|these)"
    rf"(?: \w+)? {_TEXT_NOUN}\b|following\b|below\b)[^:]{{0,60}}?(?::|[.!]?$)"
)


def embedded_text(text: str) -> list[str]:
    """The sentences of the text a user turn hands over to be worked on, when its first or last
    sentence is a cue such as "Translate the following sentence into French:" (what follows an
    opening cue, what follows a cue's colon, or what comes before a closing cue without one),
    or [] when it hands none. Questions are left out: a question handed over to
    be translated is the common benign case; the attack is an order ("Write one ...")."""
    atoms = [
        x
        for line in text.splitlines()
        for x in _SENTENCE_END.split(normalise(line))
        if x.count(" ") + 1 >= MIN_SENTENCE_WORDS or x.endswith(":")
    ][:MAX_SENTENCES]
    for i in (0, -1) if len(atoms) > 1 or ":" in "".join(atoms) else ():
        cue = _TASK_ON_TEXT.match(atoms[i])
        if cue and atoms[i].count(" ") < 25:
            rest = atoms[i][cue.end() :].strip()
            rest = [rest] if rest.count(" ") + 1 >= MIN_SENTENCE_WORDS else []
            # The text follows an opening cue, or its colon; a closing cue without one follows it.
            payload = rest + atoms[1:] if i == 0 else rest or atoms[:-1]
            return [x for x in payload if not x.rstrip("\"' ").endswith("?")]
    return []


def _scaled(p: float, t: float) -> int:
    """A model's probability on the layer's scale: FLAG_AT and above from its threshold t."""
    if p >= t:
        return min(99, FLAG_AT + round((p - t) / max(1e-9, 1 - t) * (99 - FLAG_AT)))
    return round(p / t * (FLAG_AT - 1))


def _model_hit(norm: str, source: str) -> tuple[int, float | None]:
    """The model's score on the layer's scale (FLAG_AT and above when the model flags), and its
    probability; 0 and None when the model is unavailable."""
    p = model.model_score(norm)
    if p is None:
        return 0, None
    return _scaled(p, model.threshold("user" if source not in DATA_SOURCES else source)), p


def _sentence_hit(text: str, norm: str, source: str) -> int:
    """The sentence model's score on the layer's scale: over the sentences of a tool result or
    document, or of the text a user turn hands over to be worked on; 0 when there are none or
    the model is unavailable."""
    if source in DATA_SOURCES:
        values = _json_strings(text, norm, source)
        units, where = sentences(text if values is None else values), source
    else:
        units, where = embedded_text(text), "embedded"
    p = model.sentences_score(units) if units else None
    return 0 if p is None else _scaled(p, model.sentence_threshold(where))


def pattern_check(text: str, *, source: str = "user", _depth: int = 0) -> PatternResult:
    """Return the always-on layer's verdict on one input: a user turn, or (source `tool`,
    `document`) a tool result or retrieved content, where instruction-shaped text is itself
    the sign; `system` turns get the user heuristics (they are instructions by design)."""
    if not text or not text.strip():
        return PatternResult(False, 0)
    source = source if source in SOURCES else "user"
    if len(text) > MAX_SCAN_CHARS:
        half = MAX_SCAN_CHARS // 2
        text = text[:half] + "\n" + text[-half:]
    words = _words(text)
    norm = " ".join(words)
    scored = regex_hits(norm, source=source)
    if token_flood(norm, words):
        scored.append(("instruction_override", "token_flood", MEDIUM))
    hits = [(c, n) for c, n, _ in scored]
    score = max((w for *_, w in scored), default=0)
    # Base64 and hex runs are 24 characters at least; in ASCII text the words are the raw runs.
    if _depth < 2 and (not text.isascii() or max(map(len, words), default=0) >= 24):
        enc_score, enc_hits = _encoded_hits(text, depth=_depth, source=source)
        hits += enc_hits
        score = max(score, enc_score)
    if _depth == 0 and score < FLAG_AT:  # flagged already: the model could only agree
        m_score, _ = _model_hit(_model_text(text, norm, source), source)
        if m_score >= FLAG_AT:
            # The model names no category: the heaviest heuristic that matched does, if any.
            cat = max(scored, key=lambda h: h[2])[0] if scored else "instruction_override"
            hits.append((cat, "model"))
            scored.append((cat, "model", m_score))
        score = max(score, m_score)
        if score < FLAG_AT and (s_score := _sentence_hit(text, norm, source)) >= FLAG_AT:
            hits.append(("instruction_override", "sentence_model"))
            scored.append(("instruction_override", "sentence_model", s_score))
            score = s_score
    if len({n for _, n in hits}) > 1 and score >= FLAG_AT:
        score = min(99, score + 5 * (len({n for _, n in hits}) - 1))
    category = ""
    if hits:
        weights = {n: w for _, n, w in scored}
        # The heaviest hit names the verdict; an encoded hit outranks the rest, and on a tie the
        # goal (extraction, exfiltration, ...) outranks the override that carries it.
        enc = [h for h in hits if h[0] == "encoded_payload"]
        ranked = sorted(hits, key=lambda h: (-weights.get(h[1], 0), h[0] == "instruction_override"))
        category = (enc or ranked)[0][0]
    return PatternResult(score >= FLAG_AT, int(score), category, tuple(dict.fromkeys(hits)))
